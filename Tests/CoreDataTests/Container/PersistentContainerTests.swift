import CoreDataExamples
import Foundation
import Testing
@testable import CoreData

@Suite("NSPersistentContainer: model, descriptions, folders")
struct PersistentContainerTests {
    typealias Support = ContainerTestSupport

    // MARK: Finding the model

    @Test func findsTheModelByNameInAGivenFolder() {
        let container = NSPersistentContainer(name: "Car", modelDirectory: Support.carModelDirectory)
        #expect(container.name == "Car")
        #expect(container.managedObjectModel.entitiesByName.keys.sorted() == ["Car"])
        #expect(container.persistentStoreCoordinator.managedObjectModel === container.managedObjectModel)
    }

    @Test func findsTheCurrentVersionOfAVersionedModel() {
        let container = NSPersistentContainer(name: "Library", modelDirectory: ModelTestSupport.fixtures)
        #expect(container.managedObjectModel.entitiesByName["Magazine"] != nil) // only in "Library 2", the current version
    }

    @Test func findsAnUnversionedXcdatamodelFolder() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: CoreDataManager.bundledModelURL.appendingPathComponent("Car.xcdatamodel"),
                                         to: directory.appendingPathComponent("Garage.xcdatamodel"))
        let container = NSPersistentContainer(name: "Garage", modelDirectory: directory)
        #expect(container.managedObjectModel.entitiesByName.keys.sorted() == ["Car"])
    }

    @Test func theGivenFolderComesBeforeTheBundles() throws {
        // A "Car" model in the given folder that is really the Library model: it must win over
        // the Car.xcdatamodeld of the SwiftPM resources next to the test executable.
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: ModelTestSupport.fixture("Library.xcdatamodeld/Library 2.xcdatamodel"),
                                         to: directory.appendingPathComponent("Car.xcdatamodel"))
        let container = NSPersistentContainer(name: "Car", modelDirectory: directory)
        #expect(container.managedObjectModel.entitiesByName["Book"] != nil)
        #expect(container.managedObjectModel.entitiesByName["Car"] == nil)
    }

    @Test func initWithNameFindsModelsInSwiftPMResourceFolders() {
        // Car.xcdatamodeld is a resource of the CoreDataExamples target: SwiftPM copies it into
        // swift-coredata_CoreDataExamples.resources next to the test executable.
        let container = NSPersistentContainer(name: "Car")
        #expect(container.managedObjectModel.entitiesByName.keys.sorted() == ["Car"])
        let locations = NSPersistentContainer.modelSearchLocations(firstIn: []).map(\.standardizedFileURL.path)
        #expect(locations.contains(Support.carModelDirectory.standardizedFileURL.path))
        #expect(locations.last == URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL.path)
    }

    @Test func modelSearchDirectoriesAreSearchedByInitWithName() {
        let saved = NSPersistentContainer.modelSearchDirectories
        defer { NSPersistentContainer.modelSearchDirectories = saved }
        NSPersistentContainer.modelSearchDirectories = [ModelTestSupport.fixtures]
        let container = NSPersistentContainer(name: "Unversioned")
        #expect(container.managedObjectModel.entitiesByName["Note"] != nil)
    }

    @Test func aMissingModelGivesAnEmptyModelAndLoadingFails() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let name = "NoSuchModel\(UUID().uuidString.prefix(8))"
        let container = NSPersistentContainer(name: name, modelDirectory: directory)
        #expect(container.managedObjectModel.entities.isEmpty)
        let store = directory.appendingPathComponent("\(name).sqlite")
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: store),
                                                 NSPersistentStoreDescription(url: directory.appendingPathComponent("Other.sqlite"))]
        let errors = Support.load(container)
        #expect(errors.count == 2)
        for error in errors {
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(error?.code == NSFileReadNoSuchFileError)
            #expect(error?.localizedDescription.contains("Failed to load model named \(name)") == true)
        }
        #expect(container.persistentStoreCoordinator.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: store.path))
    }

    @Test func aDamagedModelGivesTheReadersErrorWhenLoading() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = NSPersistentContainer(name: "NotXML", modelDirectory: ModelTestSupport.fixture("Broken"))
        #expect(container.managedObjectModel.entities.isEmpty)
        container.persistentStoreDescriptions = [NSPersistentStoreDescription(url: directory.appendingPathComponent("NotXML.sqlite"))]
        let errors = Support.load(container)
        #expect(errors.count == 1)
        #expect(errors.first??.domain == NSCocoaErrorDomain)
        #expect(errors.first??.localizedDescription.contains("NotXML") == true)
    }

    @Test func initWithNameAndModelUsesThatModel() {
        let model = NSManagedObjectModel(contentsOf: CoreDataManager.bundledModelURL)!
        let container = NSPersistentContainer(name: "Garage", managedObjectModel: model)
        #expect(container.name == "Garage")
        #expect(container.managedObjectModel === model)
        #expect(container.persistentStoreCoordinator.managedObjectModel === model)
        #expect(container.persistentStoreDescriptions.first?.url?.lastPathComponent == "Garage.sqlite")
    }

    // MARK: Descriptions and folders

    @Test func theDefaultDescriptionIsOneSQLiteStoreInTheDefaultDirectory() {
        let container = NSPersistentContainer(name: "Car", modelDirectory: Support.carModelDirectory)
        let descriptions = container.persistentStoreDescriptions
        #expect(descriptions.count == 1)
        #expect(descriptions.first?.type == NSSQLiteStoreType)
        #expect(descriptions.first?.url == NSPersistentContainer.defaultDirectoryURL().appendingPathComponent("Car.sqlite"))
        #expect(descriptions.first?.shouldAddStoreAsynchronously == false)
        #expect(descriptions.first?.configuration == nil)
    }

    final class RelocatedContainer: NSPersistentContainer, @unchecked Sendable {
        static let folder = URL(fileURLWithPath: "/srv/relocated", isDirectory: true)
        override class func defaultDirectoryURL() -> URL { folder }
    }

    @Test func aSubclassCanMoveTheDefaultDirectory() {
        let container = RelocatedContainer(name: "Car", modelDirectory: Support.carModelDirectory)
        #expect(container.persistentStoreDescriptions.first?.url == URL(fileURLWithPath: "/srv/relocated/Car.sqlite"))
        #expect(container.managedObjectModel.entitiesByName["Car"] != nil)
    }

    @Test func defaultDirectoryHonoursXDGDataHome() {
        let url = NSPersistentContainer.defaultDirectoryURL(environment: ["XDG_DATA_HOME": "/data/ann", "HOME": "/home/ann"],
                                                            applicationName: "garage")
        #expect(url.path == "/data/ann/garage")
        #expect(url.hasDirectoryPath)
    }

    @Test(arguments: [nil, "", "relative/share"])
    func defaultDirectoryFallsBackToLocalShare(dataHome: String?) {
        var environment = ["HOME": "/home/ann"]
        environment["XDG_DATA_HOME"] = dataHome
        let url = NSPersistentContainer.defaultDirectoryURL(environment: environment, applicationName: "garage")
        #expect(url.path == "/home/ann/.local/share/garage")
    }

    @Test func defaultDirectoryUsesTheProcessEnvironment() {
        let url = NSPersistentContainer.defaultDirectoryURL()
        let expected = NSPersistentContainer.defaultDirectoryURL(environment: ProcessInfo.processInfo.environment,
                                                                 applicationName: NSPersistentContainer.applicationName)
        #expect(url == expected)
        #expect(url.lastPathComponent == NSPersistentContainer.applicationName)
        if let dataHome = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            #expect(url.deletingLastPathComponent().standardizedFileURL.path == URL(fileURLWithPath: dataHome).standardizedFileURL.path)
        } else {
            #expect(url.deletingLastPathComponent().path.hasSuffix("/.local/share"))
        }
    }
}
