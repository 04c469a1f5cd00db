import Foundation

// Core Data's version numbers (Apple's `CoreDataDefines.h`).

/// The version of Core Data in this process: 1414, the framework version that stores record as
/// `NSPersistenceFrameworkVersion` in their metadata (what Apple's framework of recent releases
/// writes), so that code comparing it with the constants below takes its newest paths.
///
/// ```swift
/// if NSCoreDataVersionNumber >= NSCoreDataVersionNumber_iPhoneOS_9_0 { /* … */ }
/// ```
///
/// Linux difference: a constant (Apple declares a variable no one should set).
public let NSCoreDataVersionNumber: Double = 1414

/// The framework version a store writes into its metadata (`NSPersistenceFrameworkVersion`).
internal let persistenceFrameworkVersion = Int(NSCoreDataVersionNumber)

/// The Core Data version number released with macOS 10.4.
public var NSCoreDataVersionNumber10_4: Double { 46.0 }
/// The Core Data version number released with macOS 10.4.3.
public var NSCoreDataVersionNumber10_4_3: Double { 77.0 }
/// The Core Data version number released with macOS 10.5.
public var NSCoreDataVersionNumber10_5: Double { 185.0 }
/// The Core Data version number released with macOS 10.5.3.
public var NSCoreDataVersionNumber10_5_3: Double { 186.0 }
/// The Core Data version number released with macOS 10.6.
public var NSCoreDataVersionNumber10_6: Double { 246.0 }
/// The Core Data version number released with macOS 10.6.2.
public var NSCoreDataVersionNumber10_6_2: Double { 250.0 }
/// The Core Data version number released with macOS 10.6.3.
public var NSCoreDataVersionNumber10_6_3: Double { 251.0 }
/// The Core Data version number released with macOS 10.7.
public var NSCoreDataVersionNumber10_7: Double { 358.4 }
/// The Core Data version number released with macOS 10.7.2.
public var NSCoreDataVersionNumber10_7_2: Double { 358.12 }
/// The Core Data version number released with macOS 10.7.3.
public var NSCoreDataVersionNumber10_7_3: Double { 358.13 }
/// The Core Data version number released with macOS 10.7.4.
public var NSCoreDataVersionNumber10_7_4: Double { 358.14 }
/// The Core Data version number released with macOS 10.8.
public var NSCoreDataVersionNumber10_8: Double { 407.5 }
/// The Core Data version number released with macOS 10.8.2.
public var NSCoreDataVersionNumber10_8_2: Double { 407.7 }
/// The Core Data version number released with macOS 10.9.
public var NSCoreDataVersionNumber10_9: Double { 481.0 }
/// The Core Data version number released with macOS 10.9.2.
public var NSCoreDataVersionNumber10_9_2: Double { 481.1 }
/// The Core Data version number released with macOS 10.9.3.
public var NSCoreDataVersionNumber10_9_3: Double { 481.3 }
/// The Core Data version number released with macOS 10.10.
public var NSCoreDataVersionNumber10_10: Double { 526.0 }
/// The Core Data version number released with macOS 10.10.2.
public var NSCoreDataVersionNumber10_10_2: Double { 526.1 }
/// The Core Data version number released with macOS 10.10.3.
public var NSCoreDataVersionNumber10_10_3: Double { 526.2 }
/// The Core Data version number released with macOS 10.11.
public var NSCoreDataVersionNumber10_11: Double { 640.0 }
/// The Core Data version number released with macOS 10.11.3.
public var NSCoreDataVersionNumber10_11_3: Double { 641.3 }

/// The Core Data version number released with iPhone OS 3.0.
public var NSCoreDataVersionNumber_iPhoneOS_3_0: Double { 241.0 }
/// The Core Data version number released with iPhone OS 3.1.
public var NSCoreDataVersionNumber_iPhoneOS_3_1: Double { 248.0 }
/// The Core Data version number released with iPhone OS 3.2.
public var NSCoreDataVersionNumber_iPhoneOS_3_2: Double { 310.2 }
/// The Core Data version number released with iOS 4.0.
public var NSCoreDataVersionNumber_iPhoneOS_4_0: Double { 320.5 }
/// The Core Data version number released with iOS 4.1.
public var NSCoreDataVersionNumber_iPhoneOS_4_1: Double { 320.11 }
/// The Core Data version number released with iOS 4.2.
public var NSCoreDataVersionNumber_iPhoneOS_4_2: Double { 320.15 }
/// The Core Data version number released with iOS 4.3.
public var NSCoreDataVersionNumber_iPhoneOS_4_3: Double { 320.17 }
/// The Core Data version number released with iOS 5.0.
public var NSCoreDataVersionNumber_iPhoneOS_5_0: Double { 386.1 }
/// The Core Data version number released with iOS 5.1.
public var NSCoreDataVersionNumber_iPhoneOS_5_1: Double { 386.5 }
/// The Core Data version number released with iOS 6.0.
public var NSCoreDataVersionNumber_iPhoneOS_6_0: Double { 419.0 }
/// The Core Data version number released with iOS 6.1.
public var NSCoreDataVersionNumber_iPhoneOS_6_1: Double { 419.1 }
/// The Core Data version number released with iOS 7.0.
public var NSCoreDataVersionNumber_iPhoneOS_7_0: Double { 479.1 }
/// The Core Data version number released with iOS 7.1.
public var NSCoreDataVersionNumber_iPhoneOS_7_1: Double { 479.3 }
/// The Core Data version number released with iOS 8.0.
public var NSCoreDataVersionNumber_iPhoneOS_8_0: Double { 519.0 }
/// The Core Data version number released with iOS 8.3.
public var NSCoreDataVersionNumber_iPhoneOS_8_3: Double { 519.15 }
/// The Core Data version number released with iOS 9.0.
public var NSCoreDataVersionNumber_iPhoneOS_9_0: Double { 640.0 }
/// The Core Data version number released with iOS 9.2.
public var NSCoreDataVersionNumber_iPhoneOS_9_2: Double { 641.4 }
/// The Core Data version number released with iOS 9.3.
public var NSCoreDataVersionNumber_iPhoneOS_9_3: Double { 641.6 }
