import CoreData
import Foundation

extension NSPersistentStore {
    /// The store of the default stack: the first store of the default coordinator when it was set.
    ///
    /// ```swift
    /// print(NSPersistentStore.mr_default()?.url?.path ?? "no store")
    /// ```
    public class func mr_default() -> NSPersistentStore? {
        DefaultStack.shared.withLock { $0.store }
    }

    /// Where MagicalRecord keeps a store named `storeFileName`:
    /// `NSPersistentContainer.defaultDirectoryURL()/<storeFileName>`.
    ///
    /// Linux: that folder is `$XDG_DATA_HOME/<program>/` (`~/.local/share/<program>/` when
    /// `XDG_DATA_HOME` is unset), the counterpart of the Application Support folder
    /// MagicalRecord uses on Apple platforms; `<program>` is the main bundle's identifier or the
    /// process name. The set-up methods create the folder.
    ///
    /// ```swift
    /// NSPersistentStore.mr_url(forStoreName: "Cars.sqlite")   // ~/.local/share/garage/Cars.sqlite
    /// ```
    ///
    /// Optional, as MagicalRecord's `MR_urlForStoreName:` (never `nil` here).
    public class func mr_url(forStoreName storeFileName: String) -> URL? {
        storeURL(named: storeFileName)
    }

    /// ``mr_url(forStoreName:)``, not optional.
    internal class func storeURL(named storeFileName: String) -> URL {
        NSPersistentContainer.defaultDirectoryURL().appendingPathComponent(storeFileName, isDirectory: false)
    }
}
