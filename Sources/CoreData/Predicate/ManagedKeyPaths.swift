import Foundation

// Swift key paths where Apple's API takes a key string, for code that writes `#keyPath(Item.name)`
// on Apple platforms: Swift on Linux has no Objective-C, so `#keyPath` does not compile. Each key
// path is mapped to property names as `#Predicate` maps them (TypedKeyPaths.swift): it must be a
// chain of `@Managed` properties, and the model must be in use by a coordinator. docs/PORTING.md
// shows each beside the `#keyPath` spelling it replaces.

extension NSFetchRequestResult where Self: NSManagedObject {
    /// The key path string of a chain of `@Managed` properties: what `#keyPath(Item.name)` gives
    /// on Apple platforms, for any API that takes a key string.
    ///
    /// ```swift
    /// Item.keyPath(\.name)                     // "name"      (#keyPath(Item.name))
    /// Item.keyPath(\.owner?.name)              // "owner.name"
    /// request.relationshipKeyPathsForPrefetching = [Item.keyPath(\.owner)]
    /// ```
    ///
    /// A key path that is not a chain of `@Managed` properties, or asked for before the model is in
    /// use by a coordinator, is a programmer error and stops the process with a message naming
    /// it (on Apple platforms `#keyPath` refuses it at compile time).
    public static func keyPath<Value>(_ keyPath: KeyPath<Self, Value>) -> String {
        TypedKeyPaths.requiredKey(of: keyPath, in: "\(Self.self).keyPath(_:)")
    }

    /// The value of the `@Managed` property `keyPath` names, as `value(forKeyPath:)` reads it
    /// (a chain reads through to-one relationships).
    ///
    /// ```swift
    /// let name = item.value(forKey: \.name)       // item.value(forKey: #keyPath(Item.name))
    /// ```
    ///
    /// A key path that is not a chain of `@Managed` properties stops the process, as
    /// ``keyPath(_:)`` says.
    public func value<Value>(forKey keyPath: KeyPath<Self, Value>) -> Any? {
        value(forKeyPath: TypedKeyPaths.requiredKey(of: keyPath, in: "value(forKey:)"))
    }

    /// Sets the `@Managed` property `keyPath` names through key-value coding, as
    /// `setValue(_:forKey:)` does (an override of it runs).
    ///
    /// ```swift
    /// item.setValue("Model T", forKey: \.name)    // item.setValue("Model T", forKey: #keyPath(Item.name))
    /// ```
    ///
    /// The key path must name one property of the object; another stops the process, as
    /// ``keyPath(_:)`` says.
    public func setValue<Value>(_ value: Any?, forKey keyPath: KeyPath<Self, Value>) {
        setValue(value, forKey: TypedKeyPaths.requiredKey(of: keyPath, in: "setValue(_:forKey:)", single: true))
    }

    /// A mutable set proxy for the to-many relationship `keyPath` names.
    ///
    /// ```swift
    /// item.mutableSetValue(forKey: \.tags).add(tag)   // mutableSetValue(forKey: #keyPath(Item.tags))
    /// ```
    ///
    /// The key path must name one relationship of the object; another stops the process, as
    /// ``keyPath(_:)`` says.
    public func mutableSetValue<Value>(forKey keyPath: KeyPath<Self, Value>) -> NSMutableSet {
        mutableSetValue(forKey: TypedKeyPaths.requiredKey(of: keyPath, in: "mutableSetValue(forKey:)", single: true))
    }
}

extension NSExpression {
    /// A key path expression for a chain of `@Managed` properties: Apple's initializer, which
    /// takes the Swift key path of a property.
    ///
    /// ```swift
    /// let price = NSExpression(forKeyPath: \Item.price)   // NSExpression(forKeyPath: #keyPath(Item.price))
    /// ```
    ///
    /// A key path that is not a chain of `@Managed` properties, or given before the model is in
    /// use by a coordinator, is a programmer error and stops the process (Apple's stops for a
    /// key path that has no key-value coding string).
    public convenience init<Root, Value>(forKeyPath keyPath: KeyPath<Root, Value>) {
        self.init(forKeyPath: TypedKeyPaths.requiredKey(of: keyPath, in: "NSExpression(forKeyPath:)"))
    }
}

extension TypedKeyPaths {
    /// The key path string of `keyPath` (`single`: of one property), or a stop naming `caller`,
    /// the key path and why: for APIs that cannot throw, where Apple's `#keyPath` would not compile.
    static func requiredKey(of keyPath: AnyKeyPath, in caller: String, single: Bool = false) -> String {
        let names: [String]
        do {
            names = try Self.names(of: keyPath)
        } catch {
            preconditionFailure("\(caller): \((error as NSError).localizedDescription)")
        }
        precondition(!single || names.count == 1,
                     "\(caller): the key path \(TypedKeyPathError.describe(keyPath)) reads \(names.joined(separator: ".")), not one property of the object")
        return names.joined(separator: ".")
    }
}
