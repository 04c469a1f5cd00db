import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct CoreDataMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [ManagedMacro.self]
}
