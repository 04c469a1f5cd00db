import CoreData
import Foundation

extension NSManagedObjectModel {
    /// The model MagicalRecord's set-up methods use: the one given to
    /// ``mr_setDefaultManagedObjectModel(_:)`` or ``MagicalRecord/setDefaultModelNamed(_:)``;
    /// without one, the first call merges the program's models
    /// (`NSManagedObjectModel.mergedModel(from: nil)`) and keeps the result, as MagicalRecord
    /// does. `nil` when there is none.
    ///
    /// ```swift
    /// let entities = NSManagedObjectModel.mr_default()?.entitiesByName.keys
    /// ```
    public class func mr_default() -> NSManagedObjectModel? {
        if let model = DefaultStack.shared.withLock({ $0.model }) { return model }
        guard MagicalRecord.shouldAutoCreateManagedObjectModel(), let merged = NSManagedObjectModel.mergedModel(from: nil) else { return nil }
        return DefaultStack.shared.withLock { stack in
            if stack.model == nil { stack.model = merged }
            return stack.model
        }
    }

    /// Makes `model` the model of the stacks MagicalRecord sets up next (`nil` forgets it).
    ///
    /// A Linux program has no app bundle whose model MagicalRecord would find: name the model
    /// this way (as MagicalRecord's own tests do) or with ``MagicalRecord/setDefaultModelNamed(_:)``
    /// before the set-up call.
    ///
    /// ```swift
    /// let model = NSManagedObjectModel(contentsOf: URL(fileURLWithPath: "Car.xcdatamodeld"))!
    /// NSManagedObjectModel.mr_setDefaultManagedObjectModel(model)
    /// MagicalRecord.setupCoreDataStack(withStoreNamed: "Cars.sqlite")
    /// ```
    public class func mr_setDefaultManagedObjectModel(_ model: NSManagedObjectModel?) {
        DefaultStack.shared.withLock { $0.model = model }
    }
}

extension MagicalRecord {
    /// Makes the model named `modelName` the default model (``NSManagedObjectModel/mr_default()``).
    ///
    /// Linux: the name may keep Apple's extension (`"Car.momd"`, `"Car.mom"`): the model read is
    /// Xcode's source, `Car.xcdatamodeld` (or `Car.xcdatamodel`), found where
    /// `NSPersistentContainer(name:)` looks (the bundles, the SwiftPM resource folders next to the
    /// executable, `NSPersistentContainer.modelSearchDirectories`, the current directory). A model
    /// that is not found is logged as an error and leaves no default model.
    ///
    /// ```swift
    /// MagicalRecord.setDefaultModelNamed("Car.momd")
    /// MagicalRecord.setupAutoMigratingCoreDataStack()
    /// ```
    public static func setDefaultModelNamed(_ modelName: String) {
        let url = URL(fileURLWithPath: modelName)
        let known = ["momd", "mom", "xcdatamodeld", "xcdatamodel"]
        let name = known.contains(url.pathExtension) ? url.deletingPathExtension().lastPathComponent : modelName
        let model = NSPersistentContainer(name: name).managedObjectModel
        guard !model.entities.isEmpty else {
            MagicalRecordLog.error("No model named \(modelName): there is no readable \(name).xcdatamodeld or \(name).xcdatamodel where NSPersistentContainer(name:) looks")
            NSManagedObjectModel.mr_setDefaultManagedObjectModel(nil)
            return
        }
        NSManagedObjectModel.mr_setDefaultManagedObjectModel(model)
    }
}
