import Foundation
import Testing
@testable import CoreData

@Suite("Key-value coding accepts what Apple's accepts")
struct KeyValueCodingTests {
    @Test func foundationAndSwiftValues() throws {
        let stack = try TestStack()
        let car = stack.insert("Car")
        car.setValue(NSNumber(value: 1999), forKey: "year")
        car.setValue(NSNumber(value: 2.5), forKey: "price")
        car.setValue(NSNumber(value: true), forKey: "electric")
        car.setValue(NSDecimalNumber(string: "9.99"), forKey: "cost")
        car.setValue(NSString(string: "ns"), forKey: "name")
        car.setValue(NSDate(timeIntervalSinceReferenceDate: 5), forKey: "built")
        car.setValue(NSData(data: Data([1, 2])), forKey: "photo")
        #expect(car.value(forKey: "year") as? Int == 1999)
        #expect(car.value(forKey: "price") as? Double == 2.5)
        #expect(car.value(forKey: "electric") as? Bool == true)
        #expect((car.value(forKey: "cost") as? NSDecimalNumber)?.stringValue == "9.99")
        #expect(car.value(forKey: "name") as? String == "ns")
        #expect(car.value(forKey: "built") as? Date == Date(timeIntervalSinceReferenceDate: 5))
        #expect(car.value(forKey: "photo") as? Data == Data([1, 2]))
        try stack.context.save()

        car.setValue(Int16(7), forKey: "year")
        car.setValue(Float(1.5), forKey: "price")
        car.setValue(Decimal(3), forKey: "cost")
        car.setValue(NSNull(), forKey: "name")
        car.setValue(nil, forKey: "built")
        #expect(car.value(forKey: "year") as? Int16 == 7)
        #expect(car.value(forKey: "price") as? Double == 1.5)
        #expect(car.value(forKey: "name") == nil)
        #expect(car.value(forKey: "built") == nil)
        #expect(throws: NSError.self) { try stack.context.save() } // 7 is below the year's minimum
        car.setValue(2001, forKey: "year")
        try stack.context.save()
        let reopened = try stack.reopen()
        let fetched = try #require(try reopened.fetch("Car").first)
        #expect(fetched.value(forKey: "year") as? Int == 2001)
        #expect(fetched.value(forKey: "name") == nil)
        #expect((fetched.value(forKey: "cost") as? NSDecimalNumber)?.decimalValue == Decimal(3))
        #expect(fetched.dictionaryWithValues(forKeys: ["year", "name"])["name"] is NSNull)
    }

    @Test func primitiveAccessAndKeyPaths() throws {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada"])
        let car = stack.insert("Car", ["name": "a"])
        car.setPrimitiveValue(ada, forKey: "owner")
        #expect(car.primitiveValue(forKey: "owner") as? NSManagedObject === ada)
        #expect(car.value(forKeyPath: "owner.name") as? String == "Ada")
        #expect((ada.value(forKeyPath: "cars.name") as? Set<AnyHashable>) == ["a"])
    }

    @Test func confinementContextFromPlainInit() throws {
        let stack = try TestStack()
        let context = NSManagedObjectContext()
        #expect(context.concurrencyType == .confinementConcurrencyType)
        context.persistentStoreCoordinator = stack.coordinator
        NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValue("c", forKey: "name")
        try context.save()
        #expect(try stack.fetch("Car").count == 1)
    }

    /// An override of `setValue(_:forKey:)` written as on Apple platforms is called through an
    /// `NSManagedObject` reference, and every kind of value is stored once, neither leaked nor
    /// released early (a value taken `__owned` by the base method leaked through such an
    /// override: Swift puts it in the method's slot with no thunk).
    @Test func setValueOverridesAndOwnership() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = "InterceptingCar"
        let stack = try TestStack(model: model)
        let intercepting = InterceptingCar(context: stack.context)
        let car: NSManagedObject = intercepting // calls through the base class, as app code does
        let long = String(repeating: "long name ", count: 3) // on the heap, not inline
        car.setValue(1999, forKey: "year")
        car.setValue(long, forKey: "name")
        car.setValue(2.5, forKey: "price")
        car.setValue(nil, forKey: "built")
        #expect(intercepting.seen == ["year", "name", "price", "built"])
        #expect(car.value(forKey: "year") as? Int == 1999)
        #expect(car.value(forKey: "name") as? String == long)
        #expect(car.value(forKey: "price") as? Double == 2.5)
        #expect(car.value(forKey: "built") == nil)

        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            car.setValue(token, forKey: "extras")
            let noteNotAnInteger = Token()
            car.setValue(noteNotAnInteger, forKey: "year") // mistyped: kept for validation to report
        }
        #expect(weakToken != nil, "the object keeps the value it was given")
        #expect((car.value(forKey: "extras") as? Token) === weakToken)
        #expect(car.value(forKey: "year") is Token)
        car.setValue(nil, forKey: "extras")
        car.setValue(2001, forKey: "year")
        #expect(weakToken == nil, "and lets it go when it is replaced")
        #expect(car.value(forKey: "year") as? Int == 2001)
        #expect(car.value(forKey: "name") as? String == long)
        try stack.context.save()
        #expect(try stack.reopen().fetch("Car").first?.value(forKey: "name") as? String == long)
    }

    @Test func initWithContextFindsTheEntityOfTheClass() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = "HookedCar" // bare name, as Xcode writes it
        let stack = try TestStack(model: model)
        let car = HookedCar(context: stack.context)
        #expect(car.entity.name == "Car")
        #expect(car.isInserted)
        #expect(HookedCar.entity() === stack.model.entitiesByName["Car"])
        #expect(stack.insert("Car") is HookedCar, "the bare class name now resolves")
        #expect(HookedCar.fetchRequest().entityName == "Car")
    }
}

/// Overrides `setValue(_:forKey:)` as Apple-platform code does (no ownership modifier).
final class InterceptingCar: NSManagedObject {
    var seen: [String] = []
    override func setValue(_ value: Any?, forKey key: String) {
        seen.append(key)
        super.setValue(value, forKey: key)
    }
}

private final class Token: NSObject {}
