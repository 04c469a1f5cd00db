import CoreDataMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

// `@Managed`'s expansion and diagnostics, checked on source text (no compiler involved).

private let macros: [String: MacroSpec] = ["Managed": MacroSpec(type: ManagedMacro.self)]

private func expect(
    _ source: String,
    expands expanded: String,
    diagnostics: [DiagnosticSpec] = [],
    applyFixIts: [String]? = nil,
    fixedSource: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source,
        expandedSource: expanded,
        diagnostics: diagnostics,
        macroSpecs: macros,
        applyFixIts: applyFixIts,
        fixedSource: fixedSource,
        failureHandler: { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    )
}

@Suite("@Managed expansion")
struct ManagedMacroExpansionTests {
    @Test("A property becomes a getter and a setter keyed by its name, with a static key cache")
    func basicExpansion() {
        expect(
            """
            final class Car: NSManagedObject {
                @Managed var name: String?
            }
            """,
            expands: """
            final class Car: NSManagedObject {
                var name: String? {
                    get {
                        managedValue(for: Self._managedKey_name, as: (String?).self)
                    }
                    set {
                        setManagedValue(newValue, for: Self._managedKey_name)
                    }
                }

                private static let _managedKey_name = CoreData.ManagedPropertyKey("name")
            }
            """
        )
    }

    @Test("Access modifiers, attributes and comments of the property are kept")
    func modifiersKept() {
        expect(
            """
            extension Car {
                /// The owner.
                @Managed public internal(set) var owner: Person?
                @available(*, deprecated) @Managed open var tags: [String]?
            }
            """,
            expands: """
            extension Car {
                /// The owner.
                public internal(set) var owner: Person? {
                    get {
                        managedValue(for: Self._managedKey_owner, as: (Person?).self)
                    }
                    set {
                        setManagedValue(newValue, for: Self._managedKey_owner)
                    }
                }

                private static let _managedKey_owner = CoreData.ManagedPropertyKey("owner")
                @available(*, deprecated) open var tags: [String]? {
                    get {
                        managedValue(for: Self._managedKey_tags, as: ([String]?).self)
                    }
                    set {
                        setManagedValue(newValue, for: Self._managedKey_tags)
                    }
                }

                private static let _managedKey_tags = CoreData.ManagedPropertyKey("tags")
            }
            """
        )
    }

    @Test("Implicitly unwrapped types select the optional overload; backticked names lose their backticks")
    func unusualNamesAndTypes() {
        expect(
            """
            class Car: NSManagedObject {
                @Managed var `default`: String!
                @Managed var passengers: Set<Person>
            }
            """,
            expands: """
            class Car: NSManagedObject {
                var `default`: String! {
                    get {
                        managedValue(for: Self._managedKey_default, as: (String?).self)
                    }
                    set {
                        setManagedValue(newValue, for: Self._managedKey_default)
                    }
                }

                private static let _managedKey_default = CoreData.ManagedPropertyKey("default")
                var passengers: Set<Person> {
                    get {
                        managedValue(for: Self._managedKey_passengers, as: (Set<Person>).self)
                    }
                    set {
                        setManagedValue(newValue, for: Self._managedKey_passengers)
                    }
                }

                private static let _managedKey_passengers = CoreData.ManagedPropertyKey("passengers")
            }
            """
        )
    }

    @Test("In a generic class the key is made at each access (no static stored properties there)")
    func genericClass() {
        expect(
            """
            class Box<Content>: NSManagedObject {
                @Managed var label: String?
            }
            """,
            expands: """
            class Box<Content>: NSManagedObject {
                var label: String? {
                    get {
                        managedValue(for: CoreData.ManagedPropertyKey("label"), as: (String?).self)
                    }
                    set {
                        setManagedValue(newValue, for: CoreData.ManagedPropertyKey("label"))
                    }
                }
            }
            """
        )
    }

    @Test("'let' is an error, with a fix-it to 'var'")
    func letProperty() {
        expect(
            """
            class Car: NSManagedObject {
                @Managed let name: String?
            }
            """,
            expands: """
            class Car: NSManagedObject {
                let name: String?
            }
            """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed property 'name' must be declared with 'var', not 'let': its value is read from and written to the managed object",
                    line: 2, column: 14, fixIts: [FixItSpec(message: "replace 'let' with 'var'")]
                ),
            ]
        )
    }

    @Test("An initial value is an error, with a fix-it removing it")
    func initialValue() {
        expect(
            """
            class Car: NSManagedObject {
                @Managed var year: Int16 = 1900
            }
            """,
            expands: """
            class Car: NSManagedObject {
                var year: Int16 = 1900
            }
            """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed property 'year' cannot have an initial value; set the attribute's default value in the model instead",
                    line: 2, column: 30, fixIts: [FixItSpec(message: "remove the initial value")]
                ),
            ],
            applyFixIts: ["remove the initial value"],
            fixedSource: """
            class Car: NSManagedObject {
                @Managed var year: Int16
            }
            """
        )
    }

    @Test("A missing type annotation is an error")
    func missingType() {
        expect(
            """
            class Car: NSManagedObject {
                @Managed var name
            }
            """,
            expands: """
            class Car: NSManagedObject {
                var name
            }
            """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed property 'name' needs a type annotation (for example 'var name: String?'): the type selects the accessor",
                    line: 2, column: 18
                ),
            ]
        )
    }

    // One misuse per source: the test support locates a diagnostic as if its property were the
    // first member of its type.

    @Test("Computed properties and observers are errors", arguments: [
        ("@Managed var label: String { \"car\" }", "var label: String { \"car\" }", 32,
         "@Managed cannot be applied to the computed property 'label': the macro provides its getter and setter"),
        ("@Managed var name: String? { didSet { print(name ?? \"\") } }", "var name: String? { didSet { print(name ?? \"\") } }", 32,
         "@Managed property 'name' cannot have willSet/didSet observers; override willChangeValue(forKey:) or didChangeValue(forKey:) instead"),
        ("@Managed var name: String? { get { nil } set { } }", "var name: String? { get { nil } set { } }", 32,
         "@Managed cannot be applied to the computed property 'name': the macro provides its getter and setter"),
    ])
    func computedAndObservers(source: String, expanded: String, column: Int, message: String) {
        expect("class Car: NSManagedObject {\n    \(source)\n}", expands: "class Car: NSManagedObject {\n    \(expanded)\n}",
               diagnostics: [DiagnosticSpec(message: message, line: 2, column: column)])
    }

    @Test("static, lazy and weak properties are errors", arguments: [
        ("@Managed static var count: Int", "static var count: Int", "@Managed property 'count' cannot be static or class: managed values belong to each object"),
        ("@Managed lazy var name: String?", "lazy var name: String?", "@Managed property 'name' cannot be lazy"),
        ("@Managed weak var owner: Person?", "weak var owner: Person?", "@Managed property 'owner' cannot be 'weak': the managed object context owns related objects"),
    ])
    func modifierMisuses(source: String, expanded: String, message: String) {
        expect("class Car: NSManagedObject {\n    \(source)\n}", expands: "class Car: NSManagedObject {\n    \(expanded)\n}",
               diagnostics: [DiagnosticSpec(message: message, line: 2, column: 14)])
    }

    @Test("A property outside a class is an error")
    func notInClass() {
        expect(
            """
            struct Plain {
                @Managed var name: String?
            }
            """,
            expands: """
            struct Plain {
                var name: String?
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "@Managed property 'name' must be declared in an NSManagedObject subclass or an extension of one", line: 2, column: 5),
            ]
        )
    }

    @Test("Several properties in one declaration are rejected (by the macro system itself)")
    func severalBindings() {
        expect(
            """
            class Car: NSManagedObject {
                @Managed var a: Int, b: Int
            }
            """,
            expands: """
            class Car: NSManagedObject {
                var a: Int, b: Int
            }
            """,
            diagnostics: [
                DiagnosticSpec(message: "accessor macro can only be applied to a single variable", line: 2, column: 5),
                DiagnosticSpec(message: "peer macro can only be applied to a single variable", line: 2, column: 5),
            ]
        )
    }
}
