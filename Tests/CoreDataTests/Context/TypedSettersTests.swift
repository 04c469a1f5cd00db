import Foundation
import Testing
@testable import CoreData

/// The typed overloads of `setValue(_:forKey:)` (`Int`, `Int64`, `Double`, `Bool`, `String`; a
/// Linux addition that spares the caller boxing the value) do exactly what the `Any?` method does.
@Suite("Typed setValue overloads behave as setValue with an Any?")
struct TypedSettersTests {
    /// Everything the overloads accept, the values they set in place and those they hand to the
    /// general path (out of range, another attribute type, converted): the same stored value, the
    /// same changes and the same validation result as the same value boxed.
    @Test func sameResultAsTheBoxedValue() throws {
        let stack = try TestStack()
        let cases: [(entity: String, key: String, typed: (NSManagedObject) -> Void, boxed: Any?)] = [
            ("Car", "year", { $0.setValue(1999, forKey: "year") }, 1999),
            ("Car", "year", { $0.setValue(Int64(2001), forKey: "year") }, Int64(2001)),
            ("Car", "year", { $0.setValue(3_000_000_000, forKey: "year") }, 3_000_000_000), // beyond Integer 32
            ("Car", "year", { $0.setValue(7, forKey: "year") }, 7), // below the minimum: validation fails
            ("Car", "year", { $0.setValue("1999", forKey: "year") }, "1999"), // a string for an integer
            ("Car", "year", { $0.setValue(2.0, forKey: "year") }, 2.0),
            ("Person", "age", { $0.setValue(40_000, forKey: "age") }, 40_000), // beyond Integer 16
            ("Person", "age", { $0.setValue(Int64(-3), forKey: "age") }, Int64(-3)),
            ("Car", "price", { $0.setValue(2.5, forKey: "price") }, 2.5),
            ("Car", "price", { $0.setValue(3, forKey: "price") }, 3), // an integer for a double
            ("Car", "electric", { $0.setValue(true, forKey: "electric") }, true),
            ("Car", "electric", { $0.setValue(1, forKey: "electric") }, 1), // an integer for a Boolean
            ("Car", "name", { $0.setValue("Model T", forKey: "name") }, "Model T"),
            ("Car", "name", { $0.setValue(String(repeating: "long ", count: 12), forKey: "name") }, String(repeating: "long ", count: 12)),
            ("Car", "name", { $0.setValue(5, forKey: "name") }, 5), // an integer for a string
            ("Car", "cost", { $0.setValue(3, forKey: "cost") }, 3), // an integer for a decimal
            ("Car", "cost", { $0.setValue(2.5, forKey: "cost") }, 2.5),
            ("Car", "built", { $0.setValue(5.0, forKey: "built") }, 5.0), // a number for a date
            ("Car", "price", { $0.setValue(CGFloat(1.5), forKey: "price") }, CGFloat(1.5)), // converted to Double by Swift
            ("Car", "year", { $0.setValue(CGFloat(1999), forKey: "year") }, CGFloat(1999)),
        ]
        for (n, test) in cases.enumerated() {
            let typed = stack.insert(test.entity, test.entity == "Person" ? ["name": "p"] : [:])
            let boxed = stack.insert(test.entity, test.entity == "Person" ? ["name": "p"] : [:])
            test.typed(typed)
            boxed.setValue(test.boxed, forKey: test.key)
            let typedValue = typed.value(forKey: test.key)
            let boxedValue = boxed.value(forKey: test.key)
            #expect(String(describing: typedValue) == String(describing: boxedValue), "case \(n): \(test.key)")
            #expect(typedValue.map { String(describing: type(of: $0)) } == boxedValue.map { String(describing: type(of: $0)) }, "case \(n)")
            #expect(Set(typed.changedValues().keys) == Set(boxed.changedValues().keys), "case \(n)")
            #expect(validationCode(typed) == validationCode(boxed), "case \(n): \(test.key)")
            stack.context.delete(typed)
            stack.context.delete(boxed)
        }
    }

    /// A saved object set through an overload becomes updated, as through `setValue` with an
    /// `Any?`; a fault is fired first; and the values reach the store.
    @Test func updatesFaultsAndSaves() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1990])
        try stack.context.save()
        #expect(!car.isUpdated)
        car.setValue(1995, forKey: "year")
        #expect(car.isUpdated)
        #expect(stack.context.updatedObjects.contains(car))
        #expect(car.changedValues()["year"] as? Int == 1995)
        try stack.context.save()

        let reopened = try stack.reopen()
        let fault = try #require(try reopened.fetch("Car").first)
        #expect(fault.isFault)
        fault.setValue(Int64(1996), forKey: "year")
        fault.setValue("b", forKey: "name")
        fault.setValue(9.5, forKey: "price")
        fault.setValue(true, forKey: "electric")
        #expect(!fault.isFault)
        #expect(fault.isUpdated)
        #expect(Set(fault.changedValues().keys) == ["year", "name", "price", "electric"])
        try reopened.context.save()

        let again = try #require(try stack.reopen().fetch("Car").first)
        #expect(again.value(forKey: "year") as? Int == 1996)
        #expect(again.value(forKey: "name") as? String == "b")
        #expect(again.value(forKey: "price") as? Double == 9.5)
        #expect(again.value(forKey: "electric") as? Bool == true)
    }

    /// On an instance of a subclass every overload calls `setValue(_:forKey:)`, so that an
    /// override of it (written as on Apple platforms) runs.
    @Test func subclassOverrideRuns() throws {
        let (_, intercepting) = try Self.carOfClass(InterceptingCar.self)
        let car: NSManagedObject = intercepting
        car.setValue(1999, forKey: "year")
        car.setValue(Int64(2000), forKey: "year")
        car.setValue(2.5, forKey: "price")
        car.setValue(true, forKey: "electric")
        car.setValue("c", forKey: "name")
        #expect(intercepting.seen == ["year", "year", "price", "electric", "name"])
        #expect(car.value(forKey: "year") as? Int == 2000)
        #expect(car.value(forKey: "name") as? String == "c")
    }

    /// An override that calls `super.setValue` with a typed value (which Swift sends to an
    /// overload, for `super` too) sets the value and returns: the overload does not call the
    /// override again without end. Reached through an overload, the override runs once; through
    /// the `Any?` method, twice (documented in `NSManagedObject+TypedSetters.swift`).
    @Test func superCallWithATypedValueFromAnOverride() throws {
        let (stack, normalizing) = try Self.carOfClass(NormalizingCar.self)
        let car: NSManagedObject = normalizing
        car.setValue("MODEL T", forKey: "name")
        #expect(car.value(forKey: "name") as? String == "model t")
        #expect(normalizing.calls == 1)
        car.setValue(1999, forKey: "year")
        #expect(car.value(forKey: "year") as? Int == 2000)
        #expect(normalizing.calls == 2)
        let boxed: Any? = "SHOUTED"
        car.setValue(boxed, forKey: "name")
        #expect(car.value(forKey: "name") as? String == "shouted")
        #expect(normalizing.calls == 4)
        // A typed call for another key inside the override's dispatch sets that key.
        car.setValue("X", forKey: "nameAndYear")
        #expect(car.value(forKey: "name") as? String == "x")
        #expect(car.value(forKey: "year") as? Int == 2001)
        try stack.context.save()
        #expect(try stack.reopen().fetch("Car").first?.value(forKey: "name") as? String == "x")
    }

    /// A stack whose `Car` entity has the class `Car`, and a new car of it.
    private static func carOfClass<Car: NSManagedObject>(_ type: Car.Type) throws -> (TestStack, Car) {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(describing: Car.self)
        let stack = try TestStack(model: model)
        return (stack, Car(entity: model.entitiesByName["Car"]!, insertInto: stack.context))
    }

    private func validationCode(_ object: NSManagedObject) -> Int? {
        do { try object.validateForInsert(); return nil } catch { return (error as NSError).code }
    }
}

/// Normalizes what it is given, passing typed values to `super`, as Apple-platform code may.
final class NormalizingCar: NSManagedObject {
    var calls = 0
    override func setValue(_ value: Any?, forKey key: String) {
        calls += 1
        if key == "name", let name = value as? String { super.setValue(name.lowercased(), forKey: key); return }
        if key == "year", let year = value as? Int { super.setValue(year + 1, forKey: key); return }
        if key == "nameAndYear", let name = value as? String {
            self.setValue(name.lowercased(), forKey: "name")
            super.setValue(2001, forKey: "year")
            return
        }
        super.setValue(value, forKey: key)
    }
}
