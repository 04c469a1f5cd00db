import Foundation

// Fetch request templates: named fetch requests a model keeps (Xcode's model editor writes them
// as `<fetchRequest>` elements of the model). Like the rest of the model, a template can change
// until a coordinator uses the model; from then on it is immutable.
extension NSManagedObjectModel {
    /// The model's fetch request templates, by name.
    ///
    /// A template whose predicate has variables (`$NAME`) is used through
    /// ``fetchRequestFromTemplate(withName:substitutionVariables:)``, which substitutes them.
    ///
    /// ```swift
    /// for (name, template) in model.fetchRequestTemplatesByName { print(name, template.entityName ?? "") }
    /// ```
    public var fetchRequestTemplatesByName: [String: NSFetchRequest<NSFetchRequestResult>] {
        fetchRequestTemplates.withLock { $0 }
    }

    /// The fetch request template named `name`, or `nil`.
    ///
    /// Once the model is in use (a coordinator has it), the template is immutable: changing it
    /// stops the process, as Apple raises an exception; change a `copy()` of it instead.
    ///
    /// ```swift
    /// let overdue = try context.fetch(model.fetchRequestTemplate(forName: "OverdueLoans")!)
    /// ```
    public func fetchRequestTemplate(forName name: String) -> NSFetchRequest<NSFetchRequestResult>? {
        fetchRequestTemplates.withLock { $0[name] }
    }

    /// A copy of the template named `name`, with each `$VARIABLE` of its predicate replaced by
    /// `variables["VARIABLE"]`; `nil` if the model has no such template. A variable missing from
    /// `variables` is left in place, and a fetch with the request throws.
    ///
    /// ```swift
    /// let request = model.fetchRequestFromTemplate(withName: "BooksByAuthor",
    ///                                              substitutionVariables: ["AUTHOR": "Ada"])!
    /// let books = try context.fetch(request)
    /// ```
    public func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any]) -> NSFetchRequest<NSFetchRequestResult>? {
        guard let template = fetchRequestTemplate(forName: name) else { return nil }
        let request = template.copiedRequest(as: NSFetchRequestResult.self)
        request.predicate = template.predicate?.withSubstitutionVariables(variables)
        return request
    }

    /// Names `fetchRequestTemplate` as one of the model's templates (replacing the one of that
    /// name), or removes the template of that name when it is `nil`.
    ///
    /// Changing a model that a coordinator uses stops the process (Apple raises an exception).
    ///
    /// ```swift
    /// let template = NSFetchRequest<NSFetchRequestResult>(entityName: "Book")
    /// template.predicate = NSPredicate(format: "author.name == $AUTHOR")
    /// model.setFetchRequestTemplate(template, forName: "BooksByAuthor")
    /// ```
    public func setFetchRequestTemplate(_ fetchRequestTemplate: NSFetchRequest<NSFetchRequestResult>?, forName name: String) {
        assertMutable()
        fetchRequestTemplates.withLock { $0[name] = fetchRequestTemplate }
    }
}
