import Foundation

/// Xcode model files written for a test: `Cars.xcdatamodeld` with two versions, `Cars` (Car:
/// name, year) and `Cars 2` (adds an optional `color`), the second current.
enum ModelFiles {
    /// Writes `Cars.xcdatamodeld` into `folder`; returns its URL.
    @discardableResult
    static func writeCars(in folder: URL) throws -> URL {
        let bundle = folder.appendingPathComponent("Cars.xcdatamodeld")
        try write(entity(color: false), to: bundle.appendingPathComponent("Cars.xcdatamodel"))
        try write(entity(color: true), to: bundle.appendingPathComponent("Cars 2.xcdatamodel"))
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
                <key>_XCCurrentVersionName</key>
                <string>Cars 2.xcdatamodel</string>
            </dict>
            </plist>
            """.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    /// The first version's folder inside the bundle.
    static func firstVersion(of bundle: URL) -> URL { bundle.appendingPathComponent("Cars.xcdatamodel") }

    private static func entity(color: Bool) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22522" systemVersion="23B81" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Car" representedClassName="Car" syncable="YES" codeGenerationType="class">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="year" optional="YES" attributeType="Integer 32" defaultValueString="2000" usesScalarValueType="YES"/>
        \(color ? "        <attribute name=\"color\" optional=\"YES\" attributeType=\"String\"/>\n" : "")    </entity>
        </model>
        """
    }

    private static func write(_ contents: String, to version: URL) throws {
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: version.appendingPathComponent("contents"))
    }
}
