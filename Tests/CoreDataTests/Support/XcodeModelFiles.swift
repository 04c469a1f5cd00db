import Foundation

/// Models written in Xcode's format for tests: a `.xcdatamodeld` bundle with one `.xcdatamodel`
/// folder (and its `contents` file) per version, as Xcode's model editor leaves them.
enum XcodeModelFiles {
    /// Writes `<name>.xcdatamodeld` in `folder`: one version per element of `versions` (the
    /// version's name and the elements inside its `<model>`, such as ``entity(_:_:extra:)``s),
    /// and an `.xccurrentversion` naming `current` when given. Returns the bundle's URL.
    @discardableResult
    static func writeBundle(_ name: String, in folder: URL, versions: [(name: String, contents: String)], current: String? = nil) throws -> URL {
        let bundle = folder.appendingPathComponent("\(name).xcdatamodeld")
        for version in versions {
            let url = bundle.appendingPathComponent("\(version.name).xcdatamodel")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data("""
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                \(version.contents)
                </model>
                """.utf8).write(to: url.appendingPathComponent("contents"))
        }
        if let current {
            let plist: [String: Any] = ["_XCCurrentVersionName": "\(current).xcdatamodel"]
            try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
                .write(to: bundle.appendingPathComponent(".xccurrentversion"))
        }
        return bundle
    }

    /// An `<entity>` element holding `properties` (`<attribute …/>` elements), with `extra`
    /// attributes on the element (` representedClassName="Person"`).
    static func entity(_ name: String, _ properties: [String], extra: String = "") -> String {
        #"<entity name="\#(name)"\#(extra) syncable="YES">"# + properties.joined() + "</entity>"
    }
}
