import Foundation

/// An attribute whose value is composed of other attributes, its ``elements``: a dictionary
/// keyed by the elements' names (nested dictionaries for elements that are composites
/// themselves).
///
/// ```swift
/// let street = NSAttributeDescription()
/// street.name = "street"
/// street.attributeType = .stringAttributeType
/// let city = NSAttributeDescription()
/// city.name = "city"
/// city.attributeType = .stringAttributeType
/// let address = NSCompositeAttributeDescription()
/// address.name = "address"
/// address.elements = [street, city]
/// // later: person.setValue(["street": "1 Main St", "city": "Springfield"], forKey: "address")
/// //        NSPredicate(format: "address.city == %@", "Springfield")
/// ```
///
/// As Apple's SQLite store does, each leaf element is a column of the entity's table, named `Z`
/// and the element's own upper-cased name (`ZCITY`), numbered on a collision; the composite
/// itself has no column. A predicate, a sort descriptor or `propertiesToFetch` reaches an element
/// by its namespaced key path (`address.city`).
///
/// Elements may be of every attribute type but undefined, object ID and binary data that allows
/// external storage. Linux difference: Apple raises when such elements are set; here a
/// coordinator refuses the model with an error naming the element (134000, as for other model problems).
open class NSCompositeAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// The attributes the composite is made of; each may itself be a composite.
    /// Like the composite, they may be changed only until its model is in use.
    open var elements: [NSAttributeDescription] = [] {
        willSet { assertMutable() }
        didSet { for element in elements { element.containingComposite = self } }
    }

    /// Always ``NSAttributeType/compositeAttributeType``. Setting another type is a programmer
    /// error that stops the process, as Apple raises `NSInvalidArgumentException`.
    open override var attributeType: NSAttributeType {
        get { .compositeAttributeType }
        set {
            precondition(newValue == .compositeAttributeType,
                         "The attribute type of a composite cannot be changed from NSCompositeAttributeType.")
        }
    }

    /// An empty composite: no name, no elements, optional.
    public required init() {
        super.init()
    }

    /// A copy of the composite and of its elements, in no entity.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = super.copy(with: zone) as! NSCompositeAttributeDescription
        copy.elements = elements.map { $0.copy() as! NSAttributeDescription }
        return copy
    }

    /// The attribute's hash, followed by the hashes of its stored leaf elements in name order,
    /// as Apple computes it: nested composites' own names are not part of it.
    open override var versionHash: Data { VersionHash.compositeHash(self) }

    // MARK: Leaves, fixed when the model is frozen

    /// The leaf elements (nested composites flattened, depth first), each as an attribute of the
    /// entity named by its key path (`address.city`). Built when the model freezes.
    internal private(set) var leaves: [CompositeLeafAttribute] = []

    /// Builds ``leaves`` from ``elements`` (once, when the model freezes).
    internal func prepareLeaves() {
        guard leaves.isEmpty else { return }
        let defaults = defaultValue as? [String: Any]
        func collect(_ elements: [NSAttributeDescription], path: [String], defaults: [String: Any]?) {
            for element in elements {
                let elementPath = path + [element.name]
                if let nested = element as? NSCompositeAttributeDescription {
                    let nestedDefaults = (defaults?[element.name] as? [String: Any]) ?? (nested.defaultValue as? [String: Any])
                    collect(nested.elements, path: elementPath, defaults: nestedDefaults)
                } else {
                    let value = element.defaultValue ?? defaults?[element.name]
                    leaves.append(CompositeLeafAttribute(element: element, path: elementPath, in: self, defaultValue: value))
                }
            }
        }
        collect(elements, path: [name], defaults: defaults)
    }

    /// The element path from this composite to `element` (one of its elements, at any depth):
    /// `["address", "city"]`; `nil` if it is not one of them.
    internal func path(to element: NSPropertyDescription) -> [String]? {
        for candidate in elements {
            if candidate === element { return [name, candidate.name] }
            if let nested = candidate as? NSCompositeAttributeDescription, let path = nested.path(to: element) { return [name] + path }
        }
        return nil
    }

    /// The leaf named `keyPath` (`address.city`), if there is one.
    internal func leaf(named keyPath: String) -> CompositeLeafAttribute? {
        leaves.first { $0.name == keyPath }
    }

    /// Why the composite cannot be used, or `nil`: an element that is not allowed in a
    /// composite, an element without a name, or two elements of one name.
    internal var elementProblem: String? {
        func check(_ elements: [NSAttributeDescription], in path: String) -> String? {
            if elements.isEmpty { return "the composite '\(path)' has no elements" }
            var names = Set<String>()
            for element in elements {
                let elementPath = path + "." + element.name
                guard !element.name.isEmpty else { return "an element of the composite '\(path)' has no name" }
                if let problem = ModelNames.problem(elementName: element.name) { return "its element '\(elementPath)' is \(problem)" }
                guard names.insert(element.name).inserted else { return "the composite '\(path)' has two elements named '\(element.name)'" }
                if let nested = element as? NSCompositeAttributeDescription {
                    if let problem = check(nested.elements, in: elementPath) { return problem }
                    continue
                }
                switch element.attributeType {
                case .undefinedAttributeType, .objectIDAttributeType, .compositeAttributeType:
                    return "its element '\(elementPath)' has a type a composite does not support (\(element.attributeType))"
                case .binaryDataAttributeType where element.allowsExternalBinaryDataStorage:
                    return "its element '\(elementPath)' is binary data stored externally, which a composite does not support"
                default:
                    break
                }
                if element is NSDerivedAttributeDescription { return "its element '\(elementPath)' is a derived attribute, which a composite does not support" }
            }
            return nil
        }
        return check(elements, in: name)
    }
}

/// A leaf element of a composite attribute as the entity's layout holds it: an ordinary
/// attribute named by its key path (`address.city`), with a column of its own (`ZCITY`). It is
/// not one of the entity's public properties; an object keeps its value in a slot of its own,
/// and the composite's value is assembled from its leaves (``CompositeValues``).
internal final class CompositeLeafAttribute: NSAttributeDescription, @unchecked Sendable {
    /// The composite at the root of the element's path.
    private(set) weak var composite: NSCompositeAttributeDescription?
    /// The element's names from the root composite down (`["address", "city"]`).
    private(set) var elementPath: [String] = []
    /// The element's own name, upper-cased: its column's stem.
    private var stem = ""

    required init() { super.init() }

    init(element: NSAttributeDescription, path: [String], in composite: NSCompositeAttributeDescription, defaultValue: Any?) {
        super.init()
        copyAttributeSettings(from: element)
        self.name = path.joined(separator: ".")
        self.isTransient = element.isTransient || composite.isTransient
        self.defaultValue = defaultValue
        self.elementPath = path
        self.composite = composite
        self.stem = element.name.uppercased()
    }

    override var columnStem: String { stem }
}
