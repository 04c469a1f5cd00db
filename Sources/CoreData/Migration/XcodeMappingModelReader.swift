import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

// Xcode's mapping model editor saves a `.xcmappingmodel` folder holding `xcmapping.xml`, a Core
// Data XML-store document of Xcode's own objects: one `XDDEVMAPPINGMODEL` (the model paths and
// snapshots of both models), its `XDDEVENTITYMAPPING`s (entity names, `mappingnumber` order,
// policy class), and their `XDDEVATTRIBUTEMAPPING`s and `XDDEVRELATIONSHIPMAPPING`s (a name and,
// when the user wrote one, an archived value expression). Each `<object type id>` holds
// `<attribute name type>value</attribute>`s and `<relationship name idrefs="z1 z2">`s.
//
// On Apple platforms Xcode compiles the folder into a `.cdm` (an archived `NSMappingModel`) that
// Core Data reads; on Linux the folder itself is read, here, into `XcodeMappingModelFile`. The
// model snapshots (`sourcemodeldata`, `destinationmodeldata`) are Xcode's editing model, not
// `NSManagedObjectModel`s, and are not read: the caller resolves the source and destination
// models. Entity mappings are identified by entity names; their version hashes come from those
// models.
//
// Anything the reader cannot place is an error, never dropped: an idref to no object (or to an
// object of the wrong type), an object of an unknown type, an entity or property mapping that
// belongs to nothing, an expression that cannot be decoded. The one exception is what Xcode
// itself leaves behind: an entity mapping with no source, no destination and no mapping model
// (a mapping the user added and emptied) is skipped.

/// What an Xcode mapping model file says, before its models are resolved.
internal struct XcodeMappingModelFile {
    /// A property mapping: the destination property's name and its value expression, if the
    /// file has one (`nil`: Xcode generates it, or the property keeps its default).
    struct Property {
        var name: String
        var valueExpression: NSExpression?
    }

    /// An entity mapping.
    struct Entity {
        /// The mapping's name: the one the user gave, or `<Source>To<Destination>` as Xcode's
        /// compiler names it (the entity's name alone for a mapping with only one side).
        var name: String
        /// `nil` for an entity added in the destination.
        var sourceEntityName: String?
        /// `nil` for an entity removed from the source.
        var destinationEntityName: String?
        /// Xcode's `mappingtypename` (`Undefined` in every file Xcode writes).
        var mappingTypeName: String?
        /// The module-qualified class of the entity migration policy (`MyApp.AttachmentPolicy`).
        var migrationPolicyClassName: String?
        /// The source filter predicate, as written.
        var sourceFilterPredicate: String?
        var attributeMappings: [Property]
        var relationshipMappings: [Property]
    }

    /// The source model's path as Xcode recorded it (relative to the project; cosmetic).
    var sourceModelPath: String?
    /// The destination model's path as Xcode recorded it.
    var destinationModelPath: String?
    /// The entity mappings, in `mappingnumber` order.
    var entityMappings: [Entity]
}

/// Reads Xcode's `.xcmappingmodel` folders (or the `xcmapping.xml` inside one).
///
/// Problems are `NSError`s in `NSCocoaErrorDomain`: `NSFileReadNoSuchFileError` (260) for a
/// missing file, `NSFileReadCorruptFileError` (259) naming the file, the problem and its line.
internal enum XcodeMappingModelReader {
    /// The mapping model at `url`.
    static func read(at url: URL) throws -> XcodeMappingModelFile {
        let file = try xmlFile(for: url)
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw fileError(.fileReadCorruptFile, file, "could not be read (\(error.localizedDescription))", underlying: error)
        }
        return try parse(data, file: file)
    }

    /// The `xcmapping.xml` a mapping model URL stands for.
    static func xmlFile(for url: URL) throws -> URL {
        let url = url.standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw fileError(.fileReadNoSuchFile, url, "does not exist")
        }
        if url.pathExtension.lowercased() == "cdm" {
            throw fileError(.fileReadCorruptFile, url, "is a compiled mapping model; only Xcode's source format (.xcmappingmodel) can be read")
        }
        guard isDirectory.boolValue else { return url }
        let xml = url.appendingPathComponent("xcmapping.xml")
        guard FileManager.default.fileExists(atPath: xml.path) else {
            throw fileError(.fileReadNoSuchFile, xml, "does not exist: the mapping model folder has no 'xcmapping.xml'")
        }
        return xml
    }

    /// Reads the XML of an `xcmapping.xml` file.
    static func parse(_ data: Data, file: URL) throws -> XcodeMappingModelFile {
        let handler = MappingXMLHandler(file: file)
        let line = try XcodeModelReader.parseXML(data, file: file, subject: subject, delegate: handler, delegateError: { handler.error })
        guard handler.sawDatabase else {
            throw fileError(.fileReadCorruptFile, file, "is not an Xcode mapping model: it has no <database> element")
        }
        guard handler.databaseClosed else {
            throw fileError(.fileReadCorruptFile, file, "is not valid XML: the file ends before its <database> element is closed", line: line)
        }
        return try MappingBuilder(file: file, objects: handler.objects).build()
    }

    /// How messages name the file.
    static let subject = "Xcode mapping model file"

    /// An error in `NSCocoaErrorDomain` naming `file` and the problem.
    static func fileError(_ code: CoreDataError.Code, _ file: URL, _ problem: String, line: Int? = nil, underlying: Error? = nil) -> NSError {
        XcodeModelReader.fileError(code, file, problem, line: line, underlying: underlying, subject: subject)
    }
}

// MARK: - The objects of the file

/// Xcode's object types (the XML's `type`, upper case).
private enum MappingObjectType: String {
    case mappingModel = "XDDEVMAPPINGMODEL"
    case entityMapping = "XDDEVENTITYMAPPING"
    case attributeMapping = "XDDEVATTRIBUTEMAPPING"
    case relationshipMapping = "XDDEVRELATIONSHIPMAPPING"

    var label: String {
        switch self {
        case .mappingModel: return "mapping model"
        case .entityMapping: return "entity mapping"
        case .attributeMapping: return "attribute mapping"
        case .relationshipMapping: return "relationship mapping"
        }
    }
}

/// One `<object>`, as read.
private final class MappingObject {
    let id: String
    let type: MappingObjectType
    let line: Int
    var attributes: [String: (text: String, line: Int)] = [:]
    var relationships: [String: (ids: [String], line: Int)] = [:]
    init(id: String, type: MappingObjectType, line: Int) { self.id = id; self.type = type; self.line = line }

    /// A non-empty string attribute.
    func string(_ name: String) -> String? {
        guard let text = attributes[name]?.text, !text.isEmpty else { return nil }
        return text
    }

    /// `the entity mapping 'z103'`, with its name when it has one, for messages.
    var label: String {
        if let name = string("name") ?? string("destinationname") ?? string("sourcename") {
            return "the \(type.label) '\(name)' (object \(id))"
        }
        return "the \(type.label) object \(id)"
    }
}

/// Collects the `<object>`s of the document; stops at the first problem.
private final class MappingXMLHandler: NSObject, XMLParserDelegate {
    private enum Frame {
        case database
        case object(MappingObject)
        case attribute(MappingObject, name: String, line: Int)
        case relationship
        /// `<databaseInfo>` and everything in it: the store's metadata, not read.
        case skipped
    }

    let file: URL
    var error: NSError?
    var sawDatabase = false
    var databaseClosed = false
    var objects: [MappingObject] = []
    private var ids: Set<String> = []
    private var stack: [Frame] = []
    private var text = ""

    init(file: URL) { self.file = file }

    private func fail(_ parser: XMLParser, _ problem: String) {
        guard error == nil else { return }
        error = XcodeMappingModelReader.fileError(.fileReadCorruptFile, file, problem, line: parser.lineNumber)
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes: [String: String] = [:]) {
        guard error == nil else { return }
        let line = parser.lineNumber
        guard let top = stack.last else {
            guard elementName == "database", !sawDatabase else {
                return fail(parser, "is not an Xcode mapping model: its root element is <\(elementName)>, not <database>")
            }
            sawDatabase = true
            stack.append(.database)
            return
        }
        switch (top, elementName) {
        case (.skipped, _):
            stack.append(.skipped)
        case (.database, "databaseInfo"):
            stack.append(.skipped)
        case (.database, "object"):
            guard let id = attributes["id"], !id.isEmpty else { return fail(parser, "has an <object> without an id") }
            guard let typeName = attributes["type"], !typeName.isEmpty else { return fail(parser, "has the object \(id) without a type") }
            guard let type = MappingObjectType(rawValue: typeName.uppercased()) else {
                return fail(parser, "has the object \(id) of unknown type '\(typeName)'")
            }
            guard ids.insert(id).inserted else { return fail(parser, "has two objects with the id \(id)") }
            let object = MappingObject(id: id, type: type, line: line)
            objects.append(object)
            stack.append(.object(object))
        case (.object(let object), "attribute"):
            guard let name = attributes["name"], !name.isEmpty else { return fail(parser, "has an <attribute> without a name in the object \(object.id)") }
            guard object.attributes[name.lowercased()] == nil else { return fail(parser, "has two attributes '\(name)' in the object \(object.id)") }
            text = ""
            stack.append(.attribute(object, name: name.lowercased(), line: line))
        case (.object(let object), "relationship"):
            guard let name = attributes["name"], !name.isEmpty else { return fail(parser, "has a <relationship> without a name in the object \(object.id)") }
            guard object.relationships[name.lowercased()] == nil else { return fail(parser, "has two relationships '\(name)' in the object \(object.id)") }
            let ids = (attributes["idrefs"] ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
            object.relationships[name.lowercased()] = (ids, line)
            stack.append(.relationship)
        default:
            fail(parser, "has an unexpected <\(elementName)> element")
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if case .attribute? = stack.last { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        guard error == nil, let top = stack.popLast() else { return }
        switch top {
        case .attribute(let object, let name, let line):
            object.attributes[name] = (text, line)
        case .database:
            databaseClosed = true
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        guard error == nil else { return }
        error = XcodeMappingModelReader.fileError(.fileReadCorruptFile, file, "is not valid XML: \(XcodeModelReader.describe(xmlError: parseError))",
                                                  line: parser.lineNumber, underlying: parseError)
    }
}

// MARK: - Resolving the objects

/// Follows the idrefs from the one mapping model to its entity mappings and their property mappings.
private struct MappingBuilder {
    let file: URL
    let objects: [MappingObject]

    func fail(_ problem: String, line: Int) -> NSError {
        XcodeMappingModelReader.fileError(.fileReadCorruptFile, file, problem, line: line)
    }

    /// The objects a relationship of `object` names, each of the `type` expected.
    func related(_ object: MappingObject, _ relationship: String, _ type: MappingObjectType, byID: [String: MappingObject]) throws -> [MappingObject] {
        guard let entry = object.relationships[relationship] else { return [] }
        let line = entry.line
        var seen: Set<String> = []
        return try entry.ids.map { id in
            guard seen.insert(id).inserted else {
                throw fail("names the object \(id) twice in the relationship '\(relationship)' of \(object.label)", line: line)
            }
            guard let target = byID[id] else {
                throw fail("names the object \(id) in the relationship '\(relationship)' of \(object.label), but there is no such object", line: line)
            }
            guard target.type == type else {
                throw fail("names \(target.label) in the relationship '\(relationship)' of \(object.label), where \(type.label) is expected", line: line)
            }
            return target
        }
    }

    /// The children of `parent`: those its relationship `list` names, in that order, then those
    /// whose relationship `back` names it (in the file's order).
    func children(of parent: MappingObject, list: String, back: String, _ type: MappingObjectType,
                  byID: [String: MappingObject]) throws -> [MappingObject] {
        var result = try related(parent, list, type, byID: byID)
        for object in objects where object.type == type && !result.contains(where: { $0 === object }) {
            if try related(object, back, parent.type, byID: byID).contains(where: { $0 === parent }) { result.append(object) }
        }
        return result
    }

    func build() throws -> XcodeMappingModelFile {
        let byID = Dictionary(objects.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let models = objects.filter { $0.type == .mappingModel }
        guard let model = models.first else {
            throw fail("is not an Xcode mapping model: it has no \(MappingObjectType.mappingModel.rawValue) object", line: 0)
        }
        guard models.count == 1 else {
            throw fail("has \(models.count) mapping model objects (\(models.map(\.id).joined(separator: ", "))), where Xcode writes one", line: models[1].line)
        }

        let listed = try related(model, "entitymappings", .entityMapping, byID: byID)
        var entityObjects: [MappingObject] = []
        var entityMappingOf: [ObjectIdentifier: MappingObject] = [:]
        for object in objects where object.type == .entityMapping {
            let owners = try related(object, "mappingmodel", .mappingModel, byID: byID)
            let attached = listed.contains { $0 === object } || owners.contains { $0 === model }
            let hasEntities = object.string("sourcename") != nil || object.string("destinationname") != nil
            if attached && !hasEntities {
                throw fail("has \(object.label) with neither a source nor a destination entity", line: object.line)
            }
            if !attached && hasEntities {
                throw fail("has \(object.label), which belongs to no mapping model", line: object.line)
            }
            var children = ["attributemappings", "relationshipmappings"].flatMap { object.relationships[$0]?.ids ?? [] }.compactMap { byID[$0] }
            children += objects.filter { $0.relationships["entitymapping"]?.ids.contains(object.id) == true }
            for child in children where child.type == .attributeMapping || child.type == .relationshipMapping {
                if let owner = entityMappingOf.updateValue(object, forKey: ObjectIdentifier(child)), owner !== object {
                    throw fail("has \(child.label) in two entity mappings (objects \(owner.id) and \(object.id))", line: child.line)
                }
            }
            // Xcode's leftover: no entities and no mapping model (skipped, with its property mappings).
            if attached { entityObjects.append(object) }
        }
        if let orphan = objects.first(where: { ($0.type == .attributeMapping || $0.type == .relationshipMapping) && entityMappingOf[ObjectIdentifier($0)] == nil }) {
            throw fail("has \(orphan.label), which belongs to no entity mapping", line: orphan.line)
        }

        var numbered: [(number: Int, position: Int, entity: XcodeMappingModelFile.Entity)] = []
        for object in entityObjects {
            var number = Int.max
            if let entry = object.attributes["mappingnumber"] {
                let (text, line) = (entry.text, entry.line)
                guard let value = Int16(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    throw fail("has an invalid mappingnumber '\(text)' for \(object.label)", line: line)
                }
                number = Int(value)
            }
            let position = listed.firstIndex { $0 === object } ?? listed.count
            let entity = try entity(object, byID: byID)
            if numbered.contains(where: { $0.entity.name == entity.name }) {
                throw fail("has two entity mappings named '\(entity.name)'", line: object.line)
            }
            numbered.append((number, position, entity))
        }
        numbered.sort { ($0.number, $0.position) < ($1.number, $1.position) }
        return XcodeMappingModelFile(sourceModelPath: model.string("sourcemodelpath"),
                                     destinationModelPath: model.string("destinationmodelpath"),
                                     entityMappings: numbered.map(\.entity))
    }

    func entity(_ object: MappingObject, byID: [String: MappingObject]) throws -> XcodeMappingModelFile.Entity {
        let source = object.string("sourcename"), destination = object.string("destinationname")
        var name = source ?? destination ?? ""
        if let source, let destination { name = "\(source)To\(destination)" }
        name = object.string("name") ?? name
        var entity = XcodeMappingModelFile.Entity(
            name: name,
            sourceEntityName: source, destinationEntityName: destination,
            mappingTypeName: object.string("mappingtypename"),
            migrationPolicyClassName: object.string("migrationpolicyclassname"),
            sourceFilterPredicate: object.string("sourcefilterpredicatestring"),
            attributeMappings: [], relationshipMappings: [])
        var names: Set<String> = []
        for (list, type) in [("attributemappings", MappingObjectType.attributeMapping), ("relationshipmappings", .relationshipMapping)] {
            let properties = try children(of: object, list: list, back: "entitymapping", type, byID: byID).map { child in
                let property = try property(child, of: name)
                guard names.insert(property.name).inserted else {
                    throw fail("has two property mappings named '\(property.name)' in the entity mapping '\(name)'", line: child.line)
                }
                return property
            }
            if type == .attributeMapping { entity.attributeMappings = properties } else { entity.relationshipMappings = properties }
        }
        return entity
    }

    func property(_ object: MappingObject, of entityMapping: String) throws -> XcodeMappingModelFile.Property {
        guard let name = object.string("name") else {
            throw fail("has \(object.label) of the entity mapping '\(entityMapping)' without a name", line: object.line)
        }
        guard let entry = object.attributes["valueexpressiondata"] else { return .init(name: name, valueExpression: nil) }
        let (text, line) = (entry.text, entry.line)
        let what = "the value expression of the \(object.type.label) '\(name)' of the entity mapping '\(entityMapping)'"
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters), !data.isEmpty else {
            throw fail("has \(what), which is not base64 data", line: line)
        }
        do throws(BinaryPropertyListReader.Problem) {
            return .init(name: name, valueExpression: try ArchivedExpressionDecoder.decodedExpression(data))
        } catch {
            throw fail("has \(what), which cannot be read: \(error.reason)", line: line)
        }
    }
}
