import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Managed`: turns `var name: T` in an `NSManagedObject` subclass (or an extension of one) into
///
/// ```swift
/// var name: T {
///     get { managedValue(for: Self._managedKey_name, as: (T).self) }
///     set { setManagedValue(newValue, for: Self._managedKey_name) }
/// }
/// private static let _managedKey_name = CoreData.ManagedPropertyKey("name")
/// ```
///
/// The overload called is chosen by the type checker from `T` (see `Managed.swift` in the
/// `CoreData` module). In a generic type, where static stored properties are not allowed, the key
/// is created at each access instead (correct, without the index cache).
public struct ManagedMacro: AccessorMacro, PeerMacro {
    /// The accessor role: the `get` and `set` that read and write the property through its key;
    /// diagnoses a declaration `@Managed` can't apply to.
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = ManagedProperty.check(declaration, attribute: node, in: context, diagnose: true) else { return [] }
        let key = property.keyExpression
        return [
            "get { managedValue(for: \(raw: key), as: (\(property.metatypeBase)).self) }",
            "set { setManagedValue(newValue, for: \(raw: key)) }",
        ]
    }

    /// The peer role: the `private static let` holding the property's `ManagedPropertyKey` (none
    /// in a generic type, where the accessors make the key at each access).
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        // Diagnostics come from the accessor role only, once.
        guard let property = ManagedProperty.check(declaration, attribute: node, in: context, diagnose: false),
              property.usesStaticKey else { return [] }
        return ["private static let \(raw: property.keyStorageName) = CoreData.ManagedPropertyKey(\(literal: property.name))"]
    }
}

/// A `@Managed` property, checked.
struct ManagedProperty {
    /// The property's name, without backticks: the entity property's key.
    let name: String
    /// The declared type, with `T!` written as `T?`.
    let metatypeBase: TypeSyntax
    /// Whether the key lives in a static peer (not possible in generic types).
    let usesStaticKey: Bool

    var keyStorageName: String { "_managedKey_" + name }

    var keyExpression: String {
        usesStaticKey ? "Self." + keyStorageName : "CoreData.ManagedPropertyKey(" + StringLiteralExprSyntax(content: name).description + ")"
    }

    /// The property `declaration` declares, or `nil` (with a diagnostic if `diagnose`) if `@Managed` can't apply.
    static func check(_ declaration: some DeclSyntaxProtocol, attribute: AttributeSyntax, in context: some MacroExpansionContext, diagnose: Bool) -> ManagedProperty? {
        func fail(_ node: some SyntaxProtocol, _ message: ManagedDiagnostic, fixIts: [FixIt] = []) -> ManagedProperty? {
            if diagnose { context.diagnose(Diagnostic(node: Syntax(node), message: message, fixIts: fixIts)) }
            return nil
        }

        guard let variable = declaration.as(VariableDeclSyntax.self) else {
            return fail(attribute, .notAVariable)
        }
        guard variable.bindings.count == 1, let binding = variable.bindings.first else {
            return fail(variable.bindings, .multipleBindings)
        }
        guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
            return fail(binding.pattern, .notAnIdentifier)
        }
        let name = identifier.identifier.identifier?.name ?? identifier.identifier.trimmedDescription
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            let fixIt = FixIt(message: ManagedFixIt("replace 'let' with 'var'"), changes: [
                .replace(oldNode: Syntax(variable.bindingSpecifier),
                         newNode: Syntax(variable.bindingSpecifier.with(\.tokenKind, .keyword(.var)))),
            ])
            return fail(variable.bindingSpecifier, .letProperty(name), fixIts: [fixIt])
        }
        for modifier in variable.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.static), .keyword(.class):
                return fail(modifier, .typeProperty(name))
            case .keyword(.lazy):
                return fail(modifier, .lazyProperty(name))
            case .keyword(.weak), .keyword(.unowned):
                return fail(modifier, .referenceOwnership(name, modifier.name.text))
            default:
                continue
            }
        }
        if let accessors = binding.accessorBlock {
            if case .accessors(let list) = accessors.accessors,
               !list.isEmpty,
               list.allSatisfy({ [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }) {
                return fail(accessors, .observers(name))
            }
            return fail(accessors, .computed(name))
        }
        if let initializer = binding.initializer {
            let fixIt = FixIt(message: ManagedFixIt("remove the initial value"), changes: [
                .replace(oldNode: Syntax(binding), newNode: Syntax(binding.with(\.initializer, nil).with(\.typeAnnotation, binding.typeAnnotation?.with(\.trailingTrivia, [])))),
            ])
            return fail(initializer, .initialValue(name), fixIts: [fixIt])
        }
        guard let type = binding.typeAnnotation?.type else {
            return fail(binding.pattern, .missingType(name))
        }

        // The innermost enclosing declaration must be able to be an NSManagedObject subclass.
        var isGeneric = false
        for (offset, scope) in context.lexicalContext.enumerated() {
            if offset == 0 {
                if scope.is(StructDeclSyntax.self) || scope.is(EnumDeclSyntax.self) || scope.is(ActorDeclSyntax.self)
                    || scope.is(ProtocolDeclSyntax.self) {
                    return fail(attribute, .notInClass(name))
                }
            }
            if let decl = scope.asProtocol(WithGenericParametersSyntax.self), decl.genericParameterClause != nil {
                isGeneric = true
            }
            if let ext = scope.as(ExtensionDeclSyntax.self), ext.genericWhereClause != nil {
                isGeneric = true
            }
        }

        let metatypeBase: TypeSyntax
        if let iuo = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            metatypeBase = TypeSyntax(OptionalTypeSyntax(wrappedType: iuo.wrappedType.trimmed))
        } else {
            metatypeBase = type.trimmed
        }
        return ManagedProperty(name: name, metatypeBase: metatypeBase, usesStaticKey: !isGeneric)
    }
}

struct ManagedDiagnostic: DiagnosticMessage {
    let message: String
    let id: String
    var diagnosticID: MessageID { MessageID(domain: "CoreDataMacros", id: id) }
    var severity: DiagnosticSeverity { .error }

    static let notAVariable = ManagedDiagnostic(message: "@Managed can only be applied to a 'var' property of an NSManagedObject subclass", id: "notAVariable")
    static let multipleBindings = ManagedDiagnostic(message: "@Managed applies to a single property; declare each managed property with its own 'var'", id: "multipleBindings")
    static let notAnIdentifier = ManagedDiagnostic(message: "@Managed needs a simple property name (the name is the entity property's key)", id: "notAnIdentifier")
    static func letProperty(_ name: String) -> Self {
        .init(message: "@Managed property '\(name)' must be declared with 'var', not 'let': its value is read from and written to the managed object", id: "letProperty")
    }
    static func typeProperty(_ name: String) -> Self {
        .init(message: "@Managed property '\(name)' cannot be static or class: managed values belong to each object", id: "typeProperty")
    }
    static func lazyProperty(_ name: String) -> Self {
        .init(message: "@Managed property '\(name)' cannot be lazy", id: "lazyProperty")
    }
    static func referenceOwnership(_ name: String, _ keyword: String) -> Self {
        .init(message: "@Managed property '\(name)' cannot be '\(keyword)': the managed object context owns related objects", id: "referenceOwnership")
    }
    static func computed(_ name: String) -> Self {
        .init(message: "@Managed cannot be applied to the computed property '\(name)': the macro provides its getter and setter", id: "computed")
    }
    static func observers(_ name: String) -> Self {
        .init(message: "@Managed property '\(name)' cannot have willSet/didSet observers; override willChangeValue(forKey:) or didChangeValue(forKey:) instead", id: "observers")
    }
    static func initialValue(_ name: String) -> Self {
        .init(message: "@Managed property '\(name)' cannot have an initial value; set the attribute's default value in the model instead", id: "initialValue")
    }
    static func missingType(_ name: String) -> Self {
        .init(message: "@Managed property '\(name)' needs a type annotation (for example 'var \(name): String?'): the type selects the accessor", id: "missingType")
    }
    static func notInClass(_ name: String) -> Self {
        .init(message: "@Managed property '\(name)' must be declared in an NSManagedObject subclass or an extension of one", id: "notInClass")
    }
}

struct ManagedFixIt: FixItMessage {
    let message: String
    init(_ message: String) { self.message = message }
    var fixItID: MessageID { MessageID(domain: "CoreDataMacros", id: message) }
}
