import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads the models Xcode's model editor writes: a `.xcdatamodeld` folder (its current version), a
/// `.xcdatamodel` folder, or the `contents` XML file inside one.
///
/// Problems are reported as an `NSError` in `NSCocoaErrorDomain` — `NSFileReadNoSuchFileError`
/// (260) when a file is missing, `NSFileReadCorruptFileError` (259) when it cannot be understood —
/// whose `localizedDescription` names the file, the problem and, when known, the XML line.
internal enum XcodeModelReader {
    /// What reading a model produced.
    struct Result {
        /// The model, with every relationship's destination and inverse resolved.
        var model: NSManagedObjectModel
        /// The `contents` file that was read.
        var contentsURL: URL
        /// Things in the file that were read but have no equivalent here (an entity-level
        /// `<compositeAttribute>`, expression index elements, elements this reader does not know), one sentence each.
        var notes: [String]
    }

    /// Reads the model at `url`, or throws an error that says what is wrong. What the file holds
    /// that has no equivalent here (``Result/notes``) is logged as a warning, not dropped unseen.
    static func readModel(at url: URL) throws -> NSManagedObjectModel {
        let result = try read(at: url)
        for note in result.notes { CoreDataLog.warning("\(result.contentsURL.path): \(note)") }
        return result.model
    }

    /// Reads the model at `url` along with the reader's notes.
    static func read(at url: URL) throws -> Result {
        let contents = try contentsFile(for: url)
        let data: Data
        do {
            data = try Data(contentsOf: contents)
        } catch {
            throw fileError(.fileReadCorruptFile, contents, "could not be read (\(error.localizedDescription))", underlying: error)
        }
        let result = try parse(data, file: contents)
        result.model.versionedModelURL = versionedModel(containing: contents)
        return result
    }

    /// The `.xcdatamodeld` a `contents` file is a version of (`<bundle>.xcdatamodeld/<version>.xcdatamodel/contents`),
    /// or `nil` for a model outside one.
    static func versionedModel(containing contents: URL) -> URL? {
        let version = contents.deletingLastPathComponent()
        let bundle = version.deletingLastPathComponent()
        guard version.pathExtension.lowercased() == "xcdatamodel", bundle.pathExtension.lowercased() == "xcdatamodeld" else { return nil }
        return bundle
    }

    // MARK: Finding the contents file

    /// The `contents` XML file a model URL stands for.
    static func contentsFile(for url: URL) throws -> URL {
        let url = url.standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw fileError(.fileReadNoSuchFile, url, "does not exist")
        }
        guard isDirectory.boolValue else {
            if url.pathExtension.lowercased() == "mom" {
                throw fileError(.fileReadCorruptFile, url, "is a compiled model; only Xcode's source format (.xcdatamodeld, .xcdatamodel) can be read")
            }
            return url
        }
        let ext = url.pathExtension.lowercased()
        if ext == "momd" {
            throw fileError(.fileReadCorruptFile, url, "is a compiled model; only Xcode's source format (.xcdatamodeld, .xcdatamodel) can be read")
        }
        if ext != "xcdatamodeld" {
            let contents = url.appendingPathComponent("contents")
            if FileManager.default.fileExists(atPath: contents.path) { return contents }
            if ext == "xcdatamodel" {
                throw fileError(.fileReadNoSuchFile, contents, "does not exist: the model folder has no 'contents' file")
            }
        }
        let version = try currentVersion(in: url)
        let contents = version.appendingPathComponent("contents")
        guard FileManager.default.fileExists(atPath: contents.path) else {
            throw fileError(.fileReadNoSuchFile, contents, "does not exist: the model version '\(version.lastPathComponent)' has no 'contents' file")
        }
        return contents
    }

    /// The current version (a `.xcdatamodel` folder) of a `.xcdatamodeld` folder: the one named by
    /// its `.xccurrentversion`, or else the only (or last, in numeric name order) version in it.
    static func currentVersion(in bundle: URL) throws -> URL {
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        if FileManager.default.fileExists(atPath: marker.path) {
            let plist: Any
            do {
                let data = try Data(contentsOf: marker)
                plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            } catch {
                throw fileError(.fileReadCorruptFile, marker, "is not a valid property list (\(error.localizedDescription))", underlying: error)
            }
            guard let dictionary = plist as? [String: Any] else {
                throw fileError(.fileReadCorruptFile, marker, "is not a dictionary")
            }
            guard let name = dictionary["_XCCurrentVersionName"] as? String, !name.isEmpty else {
                // Xcode leaves the dictionary empty in a bundle that has only ever had one version.
                let versions = try versions(in: bundle)
                if dictionary.isEmpty && versions.count == 1 { return bundle.appendingPathComponent(versions[0]) }
                throw fileError(.fileReadCorruptFile, marker, "does not name the current model version (no '_XCCurrentVersionName' string)"
                                + (versions.count > 1 ? ", and the bundle holds \(versions.count) versions" : ""))
            }
            let version = bundle.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: version.path) else {
                throw fileError(.fileReadNoSuchFile, version, "does not exist, but '.xccurrentversion' names it as the current model version")
            }
            return version
        }
        guard let last = try versions(in: bundle).last else {
            throw fileError(.fileReadNoSuchFile, bundle, "holds no model: no '.xcdatamodel' version and no 'contents' file")
        }
        return bundle.appendingPathComponent(last)
    }

    /// The names of the `.xcdatamodel` versions in a bundle, by name without the extension,
    /// numbers compared by value: "Car" < "Car 2" < "Car 10".
    private static func versions(in bundle: URL) throws -> [String] {
        let children: [String]
        do {
            children = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
        } catch {
            throw fileError(.fileReadCorruptFile, bundle, "could not be listed (\(error.localizedDescription))", underlying: error)
        }
        return children.filter { $0.lowercased().hasSuffix(".xcdatamodel") }
            .sorted { lhs, rhs in
                let l = (lhs as NSString).deletingPathExtension, r = (rhs as NSString).deletingPathExtension
                return l.compare(r, options: [.numeric]) == .orderedAscending
            }
    }

    // MARK: Parsing

    /// Serializes XML parsing (of models and of mapping models, ``parseXML``): Foundation's
    /// `XMLParser` is not documented as safe to run on several threads at once.
    private static let parseLock = NSLock()

    /// Builds a model from the XML of a `contents` file.
    static func parse(_ data: Data, file: URL) throws -> Result {
        let handler = ModelXMLHandler(file: file)
        let line = try parseXML(data, file: file, delegate: handler, delegateError: { handler.error })
        guard handler.sawModel else {
            throw fileError(.fileReadCorruptFile, file, "is not a Core Data model: it has no <model> element")
        }
        guard handler.modelClosed else {
            throw fileError(.fileReadCorruptFile, file, "is not valid XML: the file ends before its <model> element is closed", line: line)
        }
        let model = try ModelBuilder(file: file, handler: handler).build()
        return Result(model: model, contentsURL: file, notes: handler.notes)
    }

    /// Runs `XMLParser` over `data` with `delegate`, one parse at a time (``parseLock``), and
    /// throws what went wrong: an empty file, then the delegate's own error (a problem it found,
    /// or the XML error it was told about), then the parser's. Returns the line it ended on.
    /// `subject` names the kind of file in messages (``fileError(_:_:_:line:underlying:subject:)``).
    static func parseXML(_ data: Data, file: URL, subject: String = modelSubject, delegate: XMLParserDelegate,
                         delegateError: () -> NSError?) throws -> Int {
        if data.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            throw fileError(.fileReadCorruptFile, file, "is empty", subject: subject)
        }
        let (succeeded, line, parserError): (Bool, Int, Error?) = parseLock.withLock {
            let parser = XMLParser(data: data)
            parser.shouldProcessNamespaces = false
            parser.shouldResolveExternalEntities = false
            parser.delegate = delegate
            let succeeded = parser.parse()
            defer { parser.delegate = nil }
            return (succeeded, parser.lineNumber, parser.parserError)
        }
        if let error = delegateError() { throw error }
        // Foundation's parser on Linux may return `true` and still set an error; trust the error.
        if let parserError {
            throw fileError(.fileReadCorruptFile, file, "is not valid XML: \(describe(xmlError: parserError))", line: line,
                            underlying: parserError, subject: subject)
        }
        if !succeeded {
            throw fileError(.fileReadCorruptFile, file, "is not valid XML", line: line, subject: subject)
        }
        return line
    }

    /// A readable description of an error from `XMLParser`. Its codes are libxml2's (Apple's
    /// `XMLParser.ErrorCode` values); Foundation on Linux gives no message with them.
    static func describe(xmlError error: Error) -> String {
        let ns = error as NSError
        if let reason = ns.userInfo[NSLocalizedDescriptionKey] as? String, !reason.isEmpty, ns.domain != "NSXMLParserErrorDomain" {
            return reason
        }
        let reason: String
        switch ns.code {
        case 3, 4: reason = "no XML element where the document should start (the file is empty or is not XML)"
        case 5: reason = "the file ends before its elements are closed, or has content after its root element"
        case 86: reason = "content after the end of the root element"
        case 9: reason = "an invalid character"
        case 26, 27: reason = "a reference to an undeclared entity"
        case 38: reason = "a '<' inside an attribute value"
        case 39, 40, 41, 43, 44: reason = "a malformed attribute value (quotes expected)"
        case 42: reason = "an attribute given twice in one element"
        case 73: reason = "'>' expected"
        case 74, 76: reason = "an end tag that does not match the element it closes"
        case 77: reason = "the file ends inside an element"
        case 85: reason = "elements that are not properly nested"
        default: reason = "XML error \(ns.code)"
        }
        return reason
    }

    /// How messages name a model file.
    static let modelSubject = "Core Data model file"

    /// An error in `NSCocoaErrorDomain` naming `file` (a `subject`: a model file unless said) and the problem.
    static func fileError(_ code: CoreDataError.Code, _ file: URL, _ problem: String, line: Int? = nil, underlying: Error? = nil,
                          subject: String = modelSubject) -> NSError {
        var message = "The \(subject) '\(file.path)' \(problem)"
        if let line, line > 0 { message += " (line \(line))" }
        if !message.hasSuffix(".") { message += "." }
        var extra: [String: Any] = [NSFilePathErrorKey: file.path, NSURLErrorKey: file]
        if let underlying { extra[NSUnderlyingErrorKey] = underlying }
        return CoreDataError.make(code, message, extra: extra)
    }

    /// Xcode's spelling of each attribute type.
    static let attributeTypes: [String: NSAttributeType] = [
        "Undefined": .undefinedAttributeType,
        "Integer 16": .integer16AttributeType,
        "Integer 32": .integer32AttributeType,
        "Integer 64": .integer64AttributeType,
        "Decimal": .decimalAttributeType,
        "Double": .doubleAttributeType,
        "Float": .floatAttributeType,
        "String": .stringAttributeType,
        "Boolean": .booleanAttributeType,
        "Date": .dateAttributeType,
        "Binary": .binaryDataAttributeType,
        "UUID": .UUIDAttributeType,
        "URI": .URIAttributeType,
        "Transformable": .transformableAttributeType,
        "ObjectID": .objectIDAttributeType,
        "Composite": .compositeAttributeType,
    ]

    /// Xcode's spelling of each delete rule.
    static let deleteRules: [String: NSDeleteRule] = [
        "Nullify": .nullifyDeleteRule,
        "Cascade": .cascadeDeleteRule,
        "Deny": .denyDeleteRule,
        "No Action": .noActionDeleteRule,
    ]
}

// MARK: - What the XML says, before names are resolved

/// An entity as read, with what can only be resolved once every entity is known.
private final class EntityRecord {
    let entity = NSEntityDescription()
    let line: Int
    var parentName: String?
    var properties: [NSPropertyDescription] = []
    var attributes: [AttributeRecord] = []
    var relationships: [RelationshipRecord] = []
    var fetchedProperties: [FetchedPropertyRecord] = []
    var constraints: [[String]] = []
    var indexes: [IndexRecord] = []
    var userInfo: [AnyHashable: Any] = [:]
    init(line: Int) { self.line = line }
}

/// A relationship or a fetched property as read, naming an entity that is resolved once every
/// entity is known.
private final class PropertyRecord<Property: NSPropertyDescription> {
    let property = Property()
    let line: Int
    /// A relationship's `inverseEntity`; the `entity` of a fetched property's `<fetchRequest>`
    /// (`nil` until that element is read).
    var entityName: String?
    var userInfo: [AnyHashable: Any] = [:]
    init(line: Int) { self.line = line }
}

private typealias RelationshipRecord = PropertyRecord<NSRelationshipDescription>
private typealias FetchedPropertyRecord = PropertyRecord<NSFetchedPropertyDescription>

private final class AttributeRecord {
    /// An `NSDerivedAttributeDescription` for `derived="YES"`.
    let attribute: NSAttributeDescription
    let line: Int
    var userInfo: [AnyHashable: Any] = [:]
    /// For a composite attribute: the name of the model's `<compositeAttribute>` that defines
    /// its elements (the `composite` XML attribute).
    var compositeName: String?
    init(_ attribute: NSAttributeDescription, line: Int) { self.attribute = attribute; self.line = line }
}

private final class IndexRecord {
    let name: String
    let line: Int
    var elements: [(property: String, collation: NSFetchIndexElementDescription.CollationType, ascending: Bool, line: Int)] = []
    init(name: String, line: Int) { self.name = name; self.line = line }
}

private final class ConfigurationRecord {
    let name: String
    let line: Int
    var members: [(name: String, line: Int)] = []
    init(name: String, line: Int) { self.name = name; self.line = line }
}

// MARK: - The XML handler

/// Turns the XML's elements into records; stops at the first problem.
private final class ModelXMLHandler: NSObject, XMLParserDelegate {
    private enum Frame {
        case model
        case entity(EntityRecord)
        case attribute(AttributeRecord)
        case relationship(RelationshipRecord)
        case fetchedProperty(FetchedPropertyRecord)
        case userInfo
        case uniquenessConstraints
        case uniquenessConstraint
        case fetchIndex(IndexRecord)
        case compoundIndexes(EntityRecord)
        /// A model-level `<compositeAttribute>`: its `<attribute>`s are a composite's elements
        /// (an entity record holds them; its entity's name is the definition's).
        case compositeDefinition(EntityRecord)
        case configuration(ConfigurationRecord)
        /// An element with nothing more to read (`entry`, `constraint`, `memberEntity`, `index`,
        /// `fetchIndexElement`, a fetched property's `fetchRequest`): an element inside it is an error.
        case leaf
    }

    let file: URL
    var error: NSError?
    var sawModel = false
    /// Whether the root <model> element was closed: the file is complete.
    var modelClosed = false
    var versionIdentifier: String?
    var entities: [EntityRecord] = []
    var configurations: [ConfigurationRecord] = []
    /// The model's fetch request templates, in the file's order, each with its entity's name.
    var templates: [(name: String, request: NSFetchRequest<NSFetchRequestResult>, entityName: String, line: Int)] = []
    var notes: [String] = []
    /// The model's composite attribute definitions by name.
    private var compositeDefinitions: [String: EntityRecord] = [:]

    private var stack: [Frame] = []
    /// The name of each element on ``stack``, for messages.
    private var elementNames: [String] = []
    /// Depth inside an element whose whole subtree is skipped (layout elements, composite attributes, …).
    private var skipDepth = 0
    private var constraintNames: [String] = []

    init(file: URL) { self.file = file }

    /// Gives each composite attribute (of an entity, or an element of a definition) copies of
    /// the elements of the `<compositeAttribute>` its `composite` names.
    private func resolveComposites(_ parser: XMLParser) {
        var resolved = Set<String>()
        var resolving = Set<String>()
        func resolve(_ record: AttributeRecord, in owner: String) -> Bool {
            guard let composite = record.attribute as? NSCompositeAttributeDescription else { return true }
            let what = "the composite attribute '\(owner).\(composite.name)'"
            guard let name = record.compositeName else {
                fail(parser, "does not say which composite defines \(what) (no composite=\"…\")", line: record.line)
                return false
            }
            guard let definition = compositeDefinitions[name] else {
                fail(parser, "has no <compositeAttribute> named '\(name)', which \(what) names", line: record.line)
                return false
            }
            if !resolved.contains(name) {
                guard resolving.insert(name).inserted else {
                    fail(parser, "has composite attributes that contain each other ('\(name)')", line: record.line)
                    return false
                }
                for element in definition.attributes where !resolve(element, in: name) { return false }
                resolving.remove(name)
                resolved.insert(name)
            }
            composite.elements = definition.attributes.map { $0.attribute.copy() as! NSAttributeDescription }
            return true
        }
        for entity in entities {
            for record in entity.attributes where !resolve(record, in: entity.entity.name ?? "") { return }
        }
    }

    private func fail(_ parser: XMLParser, _ problem: String, line: Int? = nil) {
        guard error == nil else { return }
        error = XcodeModelReader.fileError(.fileReadCorruptFile, file, problem, line: line ?? parser.lineNumber)
        parser.abortParsing()
    }

    /// A flag's value (checked when its element started: see ``flagNames``); absent is `NO`.
    private static func bool(_ value: String?) -> Bool {
        value.flatMap(flag) ?? false
    }

    /// A non-empty attribute value.
    private static func string(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes: [String: String] = [:]) {
        guard error == nil else { return }
        if skipDepth > 0 { skipDepth += 1; return }
        let line = parser.lineNumber
        if let (key, value) = attributes.first(where: { Self.flagNames.contains($0.key) && Self.flag($0.value) == nil }) {
            return fail(parser, "has an invalid value '\(value)' for \(key) on a <\(elementName)> (YES or NO expected)")
        }
        let depth = stack.count
        defer { if stack.count > depth { elementNames.append(elementName) } }
        guard let top = stack.last else {
            guard elementName == "model" else {
                fail(parser, "is not a Core Data model: its root element is <\(elementName)>, not <model>")
                return
            }
            sawModel = true
            versionIdentifier = Self.string(attributes["userDefinedModelVersionIdentifier"])
            stack.append(.model)
            return
        }
        switch (top, elementName) {
        case (.model, "entity"):
            guard let record = startEntity(parser, attributes, line: line) else { return }
            entities.append(record)
            stack.append(.entity(record))
        case (.model, "configuration"):
            guard let name = Self.string(attributes["name"]) else { return fail(parser, "has a <configuration> without a name") }
            if configurations.contains(where: { $0.name == name }) { return fail(parser, "has two configurations named '\(name)'") }
            let record = ConfigurationRecord(name: name, line: line)
            configurations.append(record)
            stack.append(.configuration(record))
        case (.configuration(let record), "memberEntity"):
            guard let name = Self.string(attributes["name"]) else { return fail(parser, "has a <memberEntity> without a name in configuration '\(record.name)'") }
            if record.members.contains(where: { $0.name == name }) {
                return fail(parser, "lists the entity '\(name)' twice in the configuration '\(record.name)'")
            }
            record.members.append((name, line))
            stack.append(.leaf)
        case (.model, "fetchRequest"):
            guard let name = Self.string(attributes["name"]) else { return fail(parser, "has a fetch request template (<fetchRequest>) without a name") }
            if templates.contains(where: { $0.name == name }) { return fail(parser, "has two fetch request templates named '\(name)'") }
            guard let (request, entityName) = readFetchRequest(parser, attributes, of: "the fetch request template '\(name)'") else { return }
            templates.append((name, request, entityName, line))
            stack.append(.leaf)
        case (.model, "elements"):
            skipDepth = 1 // the editor's diagram layout
        case (.entity(let entity), "attribute"):
            guard let record = startAttribute(parser, attributes, entity: entity, line: line) else { return }
            entity.properties.append(record.attribute)
            entity.attributes.append(record)
            stack.append(.attribute(record))
        case (.entity(let entity), "relationship"):
            guard let record = startRelationship(parser, attributes, entity: entity, line: line) else { return }
            entity.properties.append(record.property)
            entity.relationships.append(record)
            stack.append(.relationship(record))
        case (.entity(let entity), "fetchedProperty"):
            guard let name = Self.string(attributes["name"]), checkPropertyName(parser, name, entity: entity) else {
                return fail(parser, "has a <fetchedProperty> without a name in entity '\(entity.entity.name ?? "")'")
            }
            let record = FetchedPropertyRecord(line: line)
            record.property.name = name
            startProperty(record.property, attributes)
            entity.properties.append(record.property)
            entity.fetchedProperties.append(record)
            stack.append(.fetchedProperty(record))
        case (.fetchedProperty(let record), "fetchRequest"):
            if record.entityName != nil {
                return fail(parser, "has a second <fetchRequest> for the fetched property '\(record.property.name)'")
            }
            guard case .entity(let entity)? = stack.dropLast().last,
                  let (request, entityName) = readFetchRequest(parser, attributes, of: "the fetched property '\(entity.entity.name ?? "").\(record.property.name)'")
            else { return }
            record.property.fetchRequest = request
            record.entityName = entityName
            stack.append(.leaf)
        case (.model, "compositeAttribute"):
            guard let name = Self.string(attributes["name"]) else { return fail(parser, "has a <compositeAttribute> without a name") }
            if compositeDefinitions[name] != nil { return fail(parser, "has two composite attributes named '\(name)'") }
            let record = EntityRecord(line: line)
            record.entity.name = name
            compositeDefinitions[name] = record
            stack.append(.compositeDefinition(record))
        case (.compositeDefinition(let definition), "attribute"):
            guard let record = startAttribute(parser, attributes, entity: definition, line: line) else { return }
            definition.attributes.append(record)
            stack.append(.attribute(record))
        case (.entity, "compositeAttribute"):
            notes.append("The definition of the composite attribute '\(attributes["name"] ?? "")' (line \(line)) was not read: composite attributes' elements are not supported.")
            skipDepth = 1
        case (.entity, "uniquenessConstraints"):
            stack.append(.uniquenessConstraints)
        case (.uniquenessConstraints, "uniquenessConstraint"):
            constraintNames = []
            stack.append(.uniquenessConstraint)
        case (.uniquenessConstraint, "constraint"):
            guard let value = Self.string(attributes["value"]) else { return fail(parser, "has a uniqueness <constraint> without a value") }
            constraintNames.append(value)
            stack.append(.leaf)
        case (.entity(let entity), "fetchIndex"):
            guard let name = Self.string(attributes["name"]) else { return fail(parser, "has a <fetchIndex> without a name in entity '\(entity.entity.name ?? "")'") }
            if let problem = ModelNames.problem(indexName: name) {
                return fail(parser, "has a fetch index named '\(name)' in the entity '\(entity.entity.name ?? "")', \(problem)")
            }
            if entity.indexes.contains(where: { $0.name == name }) {
                return fail(parser, "has two fetch indexes named '\(name)' in the entity '\(entity.entity.name ?? "")'")
            }
            let record = IndexRecord(name: name, line: line)
            entity.indexes.append(record)
            stack.append(.fetchIndex(record))
        case (.fetchIndex(let index), "fetchIndexElement"):
            stack.append(.leaf)
            guard let property = Self.string(attributes["property"]) else {
                notes.append("An expression element of the fetch index '\(index.name)' (line \(line)) was not read: only property elements are supported.")
                return
            }
            let collation: NSFetchIndexElementDescription.CollationType = attributes["type"]?.lowercased() == "rtree" ? .rTree : .binary
            index.elements.append((property, collation, attributes["order"]?.lowercased() != "descending", line))
        case (.entity(let entity), "compoundIndexes"):
            // The older spelling of fetch indexes: <compoundIndexes><compoundIndex><index value="…"/>.
            stack.append(.compoundIndexes(entity))
        case (.compoundIndexes(let entity), "compoundIndex"):
            let record = IndexRecord(name: "\(entity.entity.name ?? "")_compoundIndex_\(entity.indexes.count + 1)", line: line)
            entity.indexes.append(record)
            stack.append(.fetchIndex(record))
        case (.fetchIndex(let index), "index"):
            stack.append(.leaf)
            guard let value = Self.string(attributes["value"]) else { return fail(parser, "has an <index> without a value in '\(index.name)'") }
            index.elements.append((value, .binary, true, line))
        case (.model, "userInfo"), (.entity, "userInfo"), (.attribute, "userInfo"), (.relationship, "userInfo"), (.fetchedProperty, "userInfo"):
            stack.append(.userInfo)
        case (.userInfo, "entry"):
            let owner = stack[stack.count - 2]
            stack.append(.leaf)
            guard let key = attributes["key"] else { return fail(parser, "has a userInfo <entry> without a key") }
            let value = attributes["value"] ?? ""
            switch owner {
            case .entity(let record): record.userInfo[key] = value
            case .attribute(let record): record.userInfo[key] = value
            case .relationship(let record): record.userInfo[key] = value
            case .fetchedProperty(let record): record.userInfo[key] = value
            default: notes.append("The model's user info entry '\(key)' (line \(line)) was not read: a managed object model has no user info.")
            }
        default:
            // A known element out of its place is a broken file; an unknown one (from a newer
            // Xcode) is skipped with its contents, and noted.
            if Self.knownElements.contains(elementName) {
                return fail(parser, "has an element <\(elementName)> inside <\(elementNames.last ?? "")>, where Xcode writes none")
            }
            notes.append("The element <\(elementName)> (line \(line)) was not read: it is not part of the model format this reader knows.")
            skipDepth = 1
        }
    }

    /// Text outside the elements: Xcode writes none (only whitespace between them).
    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard error == nil, skipDepth == 0, !string.allSatisfy(\.isWhitespace) else { return }
        let text = string.trimmingCharacters(in: .whitespacesAndNewlines)
        fail(parser, "has the text '\(text.prefix(40))' inside <\(elementNames.last ?? "")>, where Xcode writes none")
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        guard error == nil, skipDepth == 0 else { return }
        fail(parser, "has a CDATA section inside <\(elementNames.last ?? "")>, where Xcode writes none")
    }

    /// The elements of Xcode's model format; each is read only where Xcode writes it.
    private static let knownElements: Set<String> = [
        "model", "entity", "attribute", "relationship", "fetchedProperty", "fetchRequest", "userInfo", "entry",
        "uniquenessConstraints", "uniquenessConstraint", "constraint", "fetchIndex", "fetchIndexElement",
        "compoundIndexes", "compoundIndex", "index", "configuration", "memberEntity", "elements", "element",
        "compositeAttribute",
    ]

    /// The attributes Xcode writes as `YES`/`NO`.
    private static let flagNames: Set<String> = [
        "optional", "transient", "indexed", "spotlightIndexingEnabled", "storedInTruthFile", "syncable", "isAbstract",
        "ordered", "toMany", "usesScalarValueType", "allowsExternalBinaryDataStorage", "preserveAfterDeletion",
        "allowsCloudEncryption", "derived", "includeSubentities", "includesSubentities", "includePropertyValues",
        "includesPropertyValues", "includePendingChanges", "includesPendingChanges", "returnObjectsAsFaults",
        "returnsObjectsAsFaults", "returnDistinctResults", "returnsDistinctResults",
    ]

    /// A flag's value: `YES`/`NO`, `true`/`false` in any case, `1`/`0`; `nil` for other text.
    private static func flag(_ value: String) -> Bool? {
        switch value.lowercased() {
        case "yes", "true", "1": return true
        case "no", "false", "0": return false
        default: return nil
        }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        guard error == nil else { return }
        if skipDepth > 0 { skipDepth -= 1; return }
        guard let top = stack.popLast() else { return }
        elementNames.removeLast()
        switch top {
        case .model:
            modelClosed = true
            resolveComposites(parser)
        case .uniquenessConstraint:
            if !constraintNames.isEmpty, case .entity(let entity)? = stack.dropLast().last {
                entity.constraints.append(constraintNames)
            }
        case .entity(let record):
            if !record.userInfo.isEmpty { record.entity.userInfo = record.userInfo }
        case .attribute(let record):
            if !record.userInfo.isEmpty { record.attribute.userInfo = record.userInfo }
        case .relationship(let record):
            if !record.userInfo.isEmpty { record.property.userInfo = record.userInfo }
        case .fetchedProperty(let record):
            if !record.userInfo.isEmpty { record.property.userInfo = record.userInfo }
            if record.entityName == nil {
                guard case .entity(let entity)? = stack.last else { break }
                let entityName = entity.entity.name ?? ""
                fail(parser, "has no <fetchRequest> for the fetched property '\(entityName).\(record.property.name)'", line: record.line)
            }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        guard error == nil else { return }
        error = XcodeModelReader.fileError(.fileReadCorruptFile, file, "is not valid XML: \(XcodeModelReader.describe(xmlError: parseError))",
                                           line: parser.lineNumber, underlying: parseError)
    }

    // MARK: Elements

    private func startEntity(_ parser: XMLParser, _ a: [String: String], line: Int) -> EntityRecord? {
        guard let name = Self.string(a["name"]) else {
            fail(parser, "has an <entity> without a name")
            return nil
        }
        if let problem = ModelNames.problem(entityName: name) {
            fail(parser, "has an entity named '\(name)', \(problem)")
            return nil
        }
        let record = EntityRecord(line: line)
        let entity = record.entity
        entity.name = name
        entity.managedObjectClassName = Self.string(a["representedClassName"]) ?? "NSManagedObject"
        entity.isAbstract = Self.bool(a["isAbstract"])
        entity.versionHashModifier = Self.string(a["versionHashModifier"])
        // Xcode's inspector writes the renaming identifier as `elementID`.
        entity.renamingIdentifier = Self.string(a["renamingIdentifier"]) ?? Self.string(a["elementID"])
        record.parentName = Self.string(a["parentEntity"])
        return record
    }

    /// Whether `name` can name a property; if not, fails naming the entity and the property.
    /// (The failure stands: a later failure for a missing name does not replace it.)
    private func checkPropertyName(_ parser: XMLParser, _ name: String, entity: EntityRecord) -> Bool {
        guard let problem = ModelNames.problem(propertyName: name) else { return true }
        fail(parser, "has a property named '\(name)' in the entity '\(entity.entity.name ?? "")', \(problem)")
        return false
    }

    private func startProperty(_ property: NSPropertyDescription, _ a: [String: String]) {
        property.isOptional = Self.bool(a["optional"])
        property.isTransient = Self.bool(a["transient"])
        property.isIndexed = Self.bool(a["indexed"])
        property.isIndexedBySpotlight = Self.bool(a["spotlightIndexingEnabled"])
        property.isStoredInExternalRecord = Self.bool(a["storedInTruthFile"])
        property.versionHashModifier = Self.string(a["versionHashModifier"])
        property.renamingIdentifier = Self.string(a["renamingIdentifier"]) ?? Self.string(a["elementID"])
    }

    private func startAttribute(_ parser: XMLParser, _ a: [String: String], entity: EntityRecord, line: Int) -> AttributeRecord? {
        let entityName = entity.entity.name ?? ""
        guard let name = Self.string(a["name"]), checkPropertyName(parser, name, entity: entity) else {
            fail(parser, "has an <attribute> without a name in entity '\(entityName)'")
            return nil
        }
        // Xcode writes no attributeType for a transient attribute of type Undefined.
        guard let typeName = a["attributeType"] ?? (Self.bool(a["transient"]) ? "Undefined" : nil) else {
            fail(parser, "has no attributeType for the attribute '\(entityName).\(name)'")
            return nil
        }
        guard let type = XcodeModelReader.attributeTypes[typeName] else {
            fail(parser, "has an unknown attributeType '\(typeName)' for the attribute '\(entityName).\(name)'")
            return nil
        }
        let what = "the attribute '\(entityName).\(name)'"
        let record: AttributeRecord
        if Self.bool(a["derived"]) {
            guard let text = Self.string(a["derivationExpression"]) else {
                fail(parser, "has no derivationExpression for the derived attribute '\(entityName).\(name)'")
                return nil
            }
            let derived = NSDerivedAttributeDescription()
            do {
                derived.derivationExpression = NSExpression(node: try PredicateParser.parseExpression(text, arguments: []))
            } catch {
                fail(parser, "has an invalid derivationExpression '\(text)' for \(what): \((error as NSError).localizedDescription)")
                return nil
            }
            record = AttributeRecord(derived, line: line)
        } else {
            if let text = Self.string(a["derivationExpression"]) {
                notes.append("The derivationExpression '\(text)' of \(what) (line \(line)) was not read: the attribute is not derived.")
            }
            record = AttributeRecord(type == .compositeAttributeType ? NSCompositeAttributeDescription() : NSAttributeDescription(), line: line)
            record.compositeName = Self.string(a["composite"])
        }
        let attribute = record.attribute
        attribute.name = name
        startProperty(attribute, a)
        attribute.attributeType = type
        attribute.usesScalarValueType = Self.bool(a["usesScalarValueType"])
        attribute.allowsExternalBinaryDataStorage = Self.bool(a["allowsExternalBinaryDataStorage"])
        attribute.preservesValueInHistoryOnDeletion = Self.bool(a["preserveAfterDeletion"])
        attribute.allowsCloudEncryption = Self.bool(a["allowsCloudEncryption"])
        attribute.valueTransformerName = Self.string(a["valueTransformerName"])
        if let className = Self.string(a["customClassName"]) { attribute.attributeValueClassName = className }
        attribute.regularExpression = Self.string(a["regularExpressionString"])

        if type == .dateAttributeType {
            for (key, assign) in [("minDateTimeInterval", { (v: Double) in attribute.minimum = v }),
                                  ("maxDateTimeInterval", { (v: Double) in attribute.maximum = v })] {
                guard let text = Self.string(a[key]) else { continue }
                guard let value = Double(text) else { fail(parser, "has an invalid \(key) '\(text)' for \(what)"); return nil }
                assign(value)
            }
            if let text = Self.string(a["defaultDateTimeInterval"]) {
                guard let seconds = Double(text) else { fail(parser, "has an invalid defaultDateTimeInterval '\(text)' for \(what)"); return nil }
                attribute.defaultValue = Date(timeIntervalSinceReferenceDate: seconds)
            }
        }
        for (key, assign) in [("minValueString", { (v: Double) in attribute.minimum = v }),
                              ("maxValueString", { (v: Double) in attribute.maximum = v })] {
            guard let text = Self.string(a[key]) else { continue }
            guard let value = Double(text) else { fail(parser, "has an invalid \(key) '\(text)' for \(what)"); return nil }
            assign(value)
        }
        if let text = a["defaultValueString"] {
            switch Self.defaultValue(text, type: type) {
            case .some(.some(let value)): attribute.defaultValue = value
            case .some(.none): break // a type without default values (binary data, transformable, …)
            case .none:
                fail(parser, "has an invalid default value '\(text)' for \(what) of type '\(typeName)'")
                return nil
            }
        }
        return record
    }

    /// The typed default value for Xcode's `defaultValueString`: `nil` if the text does not fit the
    /// type, `.some(nil)` if the type takes no default.
    private static func defaultValue(_ text: String, type: NSAttributeType) -> Any?? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        func integer(_ range: ClosedRange<Int64>) -> Int64? {
            if let v = Int64(trimmed) { return range.contains(v) ? v : nil }
            // Xcode keeps a Boolean default it wrote before the attribute became an integer.
            if let flag = flag(trimmed) { return flag ? 1 : 0 }
            if let d = Double(trimmed), let v = Int64(exactly: d) { return range.contains(v) ? v : nil }
            return nil
        }
        switch type {
        case .integer16AttributeType:
            guard let v = integer(Int64(Int16.min) ... Int64(Int16.max)) else { return nil }
            return .some(NSNumber(value: Int16(v)))
        case .integer32AttributeType:
            guard let v = integer(Int64(Int32.min) ... Int64(Int32.max)) else { return nil }
            return .some(NSNumber(value: Int32(v)))
        case .integer64AttributeType:
            guard let v = integer(Int64.min ... Int64.max) else { return nil }
            return .some(NSNumber(value: v))
        case .doubleAttributeType:
            guard let v = Double(trimmed) else { return nil }
            return .some(NSNumber(value: v))
        case .floatAttributeType:
            guard let v = Float(trimmed) else { return nil }
            return .some(NSNumber(value: v))
        case .decimalAttributeType:
            guard let v = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")), !v.isNaN else { return nil }
            return .some(NSDecimalNumber(decimal: v))
        case .booleanAttributeType:
            if let flag = flag(trimmed) { return .some(NSNumber(value: flag)) }
            // A number, as Xcode keeps the default of an attribute that was an integer: nonzero is true.
            guard let number = Double(trimmed) else { return nil }
            return .some(NSNumber(value: number != 0))
        case .stringAttributeType:
            return .some(text)
        case .UUIDAttributeType:
            guard let v = UUID(uuidString: trimmed) else { return nil }
            return .some(v)
        case .URIAttributeType:
            guard let v = URL(string: trimmed) else { return nil }
            return .some(v)
        case .dateAttributeType:
            // Xcode writes date defaults as `defaultDateTimeInterval`; accept seconds here too.
            guard let v = Double(trimmed) else { return nil }
            return .some(Date(timeIntervalSinceReferenceDate: v))
        case .binaryDataAttributeType, .transformableAttributeType, .objectIDAttributeType,
             .undefinedAttributeType, .compositeAttributeType:
            return .some(nil)
        }
    }

    private func startRelationship(_ parser: XMLParser, _ a: [String: String], entity: EntityRecord, line: Int) -> RelationshipRecord? {
        let entityName = entity.entity.name ?? ""
        guard let name = Self.string(a["name"]), checkPropertyName(parser, name, entity: entity) else {
            fail(parser, "has a <relationship> without a name in entity '\(entityName)'")
            return nil
        }
        let what = "the relationship '\(entityName).\(name)'"
        guard let destination = Self.string(a["destinationEntity"]) else {
            fail(parser, "has no destinationEntity for \(what)")
            return nil
        }
        let record = RelationshipRecord(line: line)
        let relationship = record.property
        relationship.name = name
        startProperty(relationship, a)
        relationship.destinationEntityName = destination
        relationship.inverseName = Self.string(a["inverseName"])
        record.entityName = Self.string(a["inverseEntity"])
        relationship.isOrdered = Self.bool(a["ordered"])
        let toMany = Self.bool(a["toMany"])
        var counts: [String: Int] = [:]
        for key in ["minCount", "maxCount"] {
            guard let text = Self.string(a[key]) else { continue }
            guard let value = Int(text), value >= 0 else {
                fail(parser, "has an invalid \(key) '\(text)' for \(what)")
                return nil
            }
            counts[key] = value
        }
        relationship.minCount = counts["minCount"] ?? 0
        if toMany {
            let max = counts["maxCount"] ?? 0
            if max == 1 {
                fail(parser, "has maxCount 1 for the to-many \(what)")
                return nil
            }
            relationship.maxCount = max
        } else {
            relationship.maxCount = 1
        }
        if let ruleName = a["deletionRule"] {
            guard let rule = XcodeModelReader.deleteRules[ruleName] else {
                fail(parser, "has an unknown deletionRule '\(ruleName)' for \(what)")
                return nil
            }
            relationship.deleteRule = rule
        }
        return record
    }
}

extension ModelXMLHandler {
    /// Xcode's spellings of a fetch request's flags (it writes `includeSubentities`, and the
    /// `includes…`/`returns…` forms of the API are accepted too). An absent flag keeps
    /// `NSFetchRequest`'s default.
    private static let fetchRequestFlags: [(names: [String], set: @Sendable (NSFetchRequest<NSFetchRequestResult>, Bool) -> Void)] = [
        (["includeSubentities", "includesSubentities"], { $0.includesSubentities = $1 }),
        (["includePropertyValues", "includesPropertyValues"], { $0.includesPropertyValues = $1 }),
        (["includePendingChanges", "includesPendingChanges"], { $0.includesPendingChanges = $1 }),
        (["returnObjectsAsFaults", "returnsObjectsAsFaults"], { $0.returnsObjectsAsFaults = $1 }),
        (["returnDistinctResults", "returnsDistinctResults"], { $0.returnsDistinctResults = $1 }),
    ]

    /// Reads a `<fetchRequest entity=… predicateString=… …/>` (of a fetched property, or a
    /// template of the model): the request and the name of its entity, which `what` names in
    /// messages. A predicate that does not parse makes the model unreadable, as Xcode's model
    /// compiler refuses it.
    fileprivate func readFetchRequest(_ parser: XMLParser, _ a: [String: String], of what: String)
        -> (request: NSFetchRequest<NSFetchRequestResult>, entityName: String)? {
        guard let destination = Self.string(a["entity"]) else {
            fail(parser, "has no destination entity for \(what)")
            return nil
        }
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: destination)
        if let format = Self.string(a["predicateString"]) {
            do {
                request.predicate = NSPredicate.make(from: try PredicateParser.parse(format))
            } catch {
                fail(parser, "has an invalid predicate for \(what): \((error as NSError).localizedDescription)")
                return nil
            }
        }
        for (key, set) in [("fetchLimit", { request.fetchLimit = $0 }), ("fetchBatchSize", { (value: Int) in request.fetchBatchSize = value })] {
            guard let text = Self.string(a[key]) else { continue }
            guard let value = Int(text), value >= 0 else {
                fail(parser, "has an invalid \(key) '\(text)' for \(what)")
                return nil
            }
            set(value)
        }
        if let text = Self.string(a["resultType"]) {
            guard let raw = UInt(text), [0, 1, 2, 4].contains(raw) else {
                fail(parser, "has an invalid resultType '\(text)' for \(what)")
                return nil
            }
            request.resultType = NSFetchRequestResultType(rawValue: raw)
        }
        for flag in Self.fetchRequestFlags {
            guard let text = flag.names.lazy.compactMap({ Self.string(a[$0]) }).first else { continue }
            flag.set(request, Self.bool(text))
        }
        return (request, destination)
    }
}

// MARK: - Building the model

/// Resolves names (parents, destinations, inverses, constraint and index properties,
/// configuration members) and assembles the model.
private struct ModelBuilder {
    let file: URL
    let handler: ModelXMLHandler

    func fail(_ problem: String, line: Int) -> NSError {
        XcodeModelReader.fileError(.fileReadCorruptFile, file, problem, line: line)
    }

    func build() throws -> NSManagedObjectModel {
        var byName: [String: EntityRecord] = [:]
        for record in handler.entities {
            let name = record.entity.name ?? ""
            if byName[name] != nil { throw fail("has two entities named '\(name)'", line: record.line) }
            byName[name] = record
        }

        // Hierarchy, refusing unknown parents and cycles.
        for record in handler.entities {
            guard let parentName = record.parentName else { continue }
            let name = record.entity.name ?? ""
            guard let parent = byName[parentName] else {
                throw fail("names a parent entity '\(parentName)' for the entity '\(name)', but there is no such entity", line: record.line)
            }
            var seen: Set<String> = [name]
            var ancestor: EntityRecord? = parent
            while let current = ancestor {
                let currentName = current.entity.name ?? ""
                guard seen.insert(currentName).inserted else {
                    throw fail("has an entity hierarchy that loops through '\(name)'", line: record.line)
                }
                ancestor = current.parentName.flatMap { byName[$0] }
            }
        }

        // Own properties, then sub-entities (a parent's properties are inherited).
        for record in handler.entities {
            var names: Set<String> = []
            for property in record.properties where !names.insert(property.name).inserted {
                throw fail("has two properties named '\(property.name)' in the entity '\(record.entity.name ?? "")'", line: record.line)
            }
            record.entity.properties = record.properties
        }
        for record in handler.entities {
            guard let parentName = record.parentName, let parent = byName[parentName] else { continue }
            parent.entity.subentities = parent.entity.subentities + [record.entity]
        }
        for record in handler.entities where record.parentName != nil {
            let inherited = Set(record.entity.superentity?.properties.map(\.name) ?? [])
            if let clash = record.properties.first(where: { inherited.contains($0.name) }) {
                throw fail("has the entity '\(record.entity.name ?? "")' redeclare the inherited property '\(clash.name)'", line: record.line)
            }
        }

        // Destinations, then inverses.
        for record in handler.entities {
            for item in record.relationships {
                let relationship = item.property
                let destinationName = relationship.destinationEntityName ?? ""
                guard let destination = byName[destinationName] else {
                    throw fail("names a destination entity '\(destinationName)' for the relationship '\(record.entity.name ?? "").\(relationship.name)', but there is no such entity", line: item.line)
                }
                relationship.destinationEntity = destination.entity
            }
        }
        for record in handler.entities {
            for item in record.fetchedProperties {
                let name = item.entityName ?? ""
                guard let destination = byName[name] else {
                    throw fail("names a destination entity '\(name)' for the fetched property '\(record.entity.name ?? "").\(item.property.name)', but there is no such entity", line: item.line)
                }
                item.property.fetchRequest?.entity = destination.entity
            }
        }
        for record in handler.entities {
            for item in record.relationships {
                let relationship = item.property
                guard let inverseName = relationship.inverseName else { continue }
                let what = "'\(record.entity.name ?? "").\(relationship.name)'"
                let ownerName = item.entityName ?? relationship.destinationEntityName ?? ""
                guard let owner = byName[ownerName] else {
                    throw fail("names an inverse entity '\(ownerName)' for the relationship \(what), but there is no such entity", line: item.line)
                }
                guard let inverse = owner.entity.propertiesByName[inverseName] as? NSRelationshipDescription else {
                    throw fail("names an inverse relationship '\(ownerName).\(inverseName)' for the relationship \(what), but there is no such relationship", line: item.line)
                }
                relationship.inverseRelationship = inverse
            }
        }

        // Derivations read properties of the entity and of the entities it leads to.
        for record in handler.entities {
            for item in record.attributes {
                guard let derived = item.attribute as? NSDerivedAttributeDescription else { continue }
                do {
                    _ = try Derivation(for: derived)
                } catch {
                    throw fail("has the derived attribute '\(record.entity.name ?? "").\(derived.name)', which cannot be computed: \(error.reason)", line: item.line)
                }
            }
        }

        // Uniqueness constraints and indexes name properties of the entity (inherited included).
        for record in handler.entities {
            let entity = record.entity
            let properties = entity.propertiesByName
            for constraint in record.constraints {
                if let unknown = constraint.first(where: { properties[$0] == nil && entity.compositeElement(named: $0) == nil }) {
                    throw fail("has a uniqueness constraint on '\(unknown)', which the entity '\(entity.name ?? "")' does not have", line: record.line)
                }
            }
            entity.uniquenessConstraints = record.constraints.map { $0 as [Any] }
            var indexes: [NSFetchIndexDescription] = []
            for index in record.indexes {
                var elements: [NSFetchIndexElementDescription] = []
                for element in index.elements {
                    // A property, or an element of a composite by key path (`address.city`).
                    guard let property = properties[element.property] ?? entity.compositeElement(named: element.property) else {
                        throw fail("has the fetch index '\(index.name)' on '\(element.property)', which the entity '\(entity.name ?? "")' does not have", line: element.line)
                    }
                    let description = NSFetchIndexElementDescription(property: property, collationType: element.collation)
                    description.isAscending = element.ascending
                    elements.append(description)
                }
                let description = NSFetchIndexDescription(name: index.name, elements: elements)
                description.entity = entity
                indexes.append(description)
            }
            entity.indexes = indexes
        }

        let model = NSManagedObjectModel()
        model.entities = handler.entities.map(\.entity)
        for template in handler.templates {
            guard let entity = byName[template.entityName] else {
                throw fail("names an entity '\(template.entityName)' for the fetch request template '\(template.name)', but there is no such entity", line: template.line)
            }
            template.request.entity = entity.entity
            model.setFetchRequestTemplate(template.request, forName: template.name)
        }
        if let identifier = handler.versionIdentifier { model.versionIdentifiers = [identifier] }
        for configuration in handler.configurations {
            var members: [NSEntityDescription] = []
            for member in configuration.members {
                guard let record = byName[member.name] else {
                    throw fail("lists an entity '\(member.name)' in the configuration '\(configuration.name)', but there is no such entity", line: member.line)
                }
                members.append(record.entity)
            }
            model.setEntities(members, forConfigurationName: configuration.name)
        }
        return model
    }
}
