import Foundation
import Testing
@testable import CoreData

/// The values buffer reads back what was written in narrow (8-byte) and wide slots alike,
/// keeps values of another kind in narrow slots, and copies on write.
@Suite("PropertyValues")
struct PropertyValuesTests {
    /// int, double, bool, date, string, int, to-one: narrow slots 0–3 and 5, wide 4 and 6.
    static let shape = ValueShape.make(storageKinds: [.integer64, .double, .bool, .date, .string, .integer16, .toOne])

    static let samples: [StoreValue] = [
        .null, .int(0), .int(-1), .int(.min), .int(.max), .double(-0.0), .double(.infinity), .double(2.5), .bool(true), .bool(false),
        .date(Date(timeIntervalSinceReferenceDate: -12.25)), .string("text"), .data(Data([1, 2])), .decimal(Decimal(7)),
        .object(ObjectBox("boxed")),
    ]

    @Test func everySlotReadsBackEveryValue() {
        for index in 0..<Self.shape.count {
            var values = PropertyValues(nullsOf: Self.shape)
            #expect(values.count == 7)
            for sample in Self.samples {
                values[index] = sample
                #expect(values[index] == sample, "slot \(index), \(sample)")
                for other in 0..<values.count where other != index { #expect(values[other] == .null) }
            }
            values.setInt64(42, at: index)
            #expect(values[index] == .int(42))
            #expect(values.int64(at: index) == (Self.shape.slots[index].tag >= 0 ? 42 : nil))
            values[index] = .null
            #expect(values.allSatisfy { $0.isNull })
        }
    }

    /// A slot plan (the SQLite store's insert loop) reads every planned slot in order: integers
    /// as integers, every other value (null, another kind, a wide slot, an overflow) by its
    /// position; buffers of another shape are refused, with nothing called.
    @Test func slotPlanReadsIntegersInPlaceAndHandsBackTheRest() {
        var values = PropertyValues(nullsOf: Self.shape)
        values[0] = .int(7)
        values[1] = .double(2.5)
        values[3] = .date(Date(timeIntervalSinceReferenceDate: 1))
        values[4] = .string("text")
        values[5] = .string("mistyped") // a narrow slot holding another kind (overflow)
        let indexes = [5, 0, 1, 2, 3, 4, 0]
        let plan = values.slotPlan(for: indexes)!
        var seen: [String] = []
        let read = withUnsafePointer(to: values) {
            PropertyValues.forEachInteger(at: $0, plan, integer: { seen.append("int \($0)") }, other: { n in seen.append("\(n): \(values[indexes[n]])") })
        }
        #expect(read)
        #expect(seen == ["0: \(StoreValue.string("mistyped"))", "int 7", "2: \(StoreValue.double(2.5))", "3: \(StoreValue.null)",
                         "4: \(StoreValue.date(Date(timeIntervalSinceReferenceDate: 1)))", "5: \(StoreValue.string("text"))", "int 7"])

        // Another buffer of the same shape: read by the same plan.
        var other = PropertyValues(nullsOf: Self.shape)
        other.setInt64(-1, at: 0)
        var integers: [Int64] = []
        #expect(withUnsafePointer(to: other) { PropertyValues.forEachInteger(at: $0, plan, integer: { integers.append($0) }, other: { _ in }) })
        #expect(integers == [-1, -1])

        // A buffer of another shape (all wide): refused, nothing called.
        let wide = PropertyValues([StoreValue.int(1), .int(2), .int(3), .int(4), .int(5), .int(6), .int(7)])
        var called = false
        #expect(!withUnsafePointer(to: wide) { PropertyValues.forEachInteger(at: $0, plan, integer: { _ in called = true }, other: { _ in called = true }) })
        let empty = PropertyValues()
        #expect(!withUnsafePointer(to: empty) { PropertyValues.forEachInteger(at: $0, plan, integer: { _ in called = true }, other: { _ in called = true }) })
        #expect(!called)
        #expect(PropertyValues(nullsOf: ValueShape.make(storageKinds: [])).slotPlan(for: []) == nil)
    }

    /// Shapes are never freed, so they are shared: entities with the same pattern of narrow and
    /// wide slots get the same shape, however many models a process builds.
    @Test func entitiesOfOnePatternShareTheirShape() {
        func model() -> NSManagedObjectModel {
            let item = NSEntityDescription()
            item.name = "ShapeItem"
            item.properties = [("count", NSAttributeType.integer64AttributeType), ("name", .stringAttributeType)].map { name, type in
                let attribute = NSAttributeDescription()
                attribute.name = name
                attribute.attributeType = type
                return attribute
            }
            let model = NSManagedObjectModel()
            model.entities = [item]
            return model
        }
        let models = (0..<3).map { _ in model() }
        let shapes = models.map { ObjectIdentifier($0.entitiesByName["ShapeItem"]!.layout.valueShape) }
        #expect(Set(shapes).count == 1)
        // The same pattern made directly (Integer 16 is narrow as Integer 64 is; a URL wide as a string).
        #expect(ObjectIdentifier(ValueShape.make(storageKinds: [.integer16, .url])) == shapes[0])
        #expect(ObjectIdentifier(ValueShape.make(storageKinds: [.string, .integer64])) != shapes[0])
    }

    @Test func nanIsKept() {
        var values = PropertyValues(nullsOf: Self.shape)
        values[1] = .double(.nan)
        guard case .double(let double) = values[1] else { Issue.record("not a double"); return }
        #expect(double.isNaN)
    }

    @Test func copiesOnWrite() {
        var values = PropertyValues(nullsOf: Self.shape)
        values[0] = .int(1)
        values[4] = .string("a")
        values[5] = .object(ObjectBox("mistyped")) // overflow of a narrow slot
        let snapshot = values
        values[0] = .int(2)
        values[4] = .string("b")
        values.setInt64(3, at: 5) // replaces the overflow value
        #expect(snapshot[0] == .int(1) && snapshot[4] == .string("a"))
        guard case .object(let box) = snapshot[5] else { Issue.record("overflow value lost"); return }
        #expect(box.value as? String == "mistyped")
        #expect(values[0] == .int(2) && values[4] == .string("b") && values[5] == .int(3))
        #expect(values != snapshot)
        var again = snapshot
        again[0] = .int(2)
        again[4] = .string("b")
        again[5] = .int(3)
        #expect(again == values)
    }

    /// An overflow value lives in a box its narrow slot's payload holds: the box is kept while
    /// any copy of the buffer holds it, and let go when the last one goes or the slot is written.
    @Test func overflowValuesAreReleasedExactlyOnce() {
        final class Token {}
        weak var replaced: Token?
        weak var shared: Token?
        do {
            var values = PropertyValues(nullsOf: Self.shape)
            do {
                let first = Token(), second = Token()
                replaced = first
                shared = second
                values[0] = .object(ObjectBox(first)) // narrow slot 0: overflow
                values[0] = .object(ObjectBox(second)) // replaces it: the first box goes
            }
            #expect(replaced == nil && shared != nil)
            var copy = values // shares the buffer
            copy[1] = .int(1) // a copy of the buffer: both hold the box
            values = PropertyValues()
            #expect(shared != nil)
            guard case .object(let box) = copy[0] else { Issue.record("overflow value lost"); return }
            #expect(box.value as AnyObject? === shared)
            copy[0] = .int(2) // overwritten: the last reference goes
            #expect(copy[0] == .int(2))
        }
        #expect(shared == nil)
    }

    /// A buffer that held an overflow value and was copied before releases every box when both
    /// copies go, whatever their slots hold then.
    @Test func copiedOverflowValuesGoWithTheirBuffers() {
        final class Token {}
        weak var token: Token?
        do {
            var values = PropertyValues(nullsOf: Self.shape)
            do {
                let made = Token()
                token = made
                values[5] = .object(ObjectBox(made))
            }
            var copy = values
            copy[5] = .null // the copy's slot is rewritten; the original still holds the box
            #expect(token != nil)
            #expect(copy[5] == .null)
        }
        #expect(token == nil)
    }

    /// Several boxes in one buffer, a copy let go while it still holds them, and an integer
    /// written over one (`setInt64`): every box goes exactly when its last buffer lets it go.
    @Test func severalOverflowValuesAndCopiesLetGo() {
        final class Token {}
        weak var first: Token?
        weak var second: Token?
        do {
            var values = PropertyValues(nullsOf: Self.shape)
            do {
                let a = Token(), b = Token()
                first = a
                second = b
                values[0] = .object(ObjectBox(a))
                values[2] = .object(ObjectBox(b))
            }
            do {
                var copy = values
                copy[1] = .double(1) // its own buffer, holding both boxes
                #expect(copy[0] == values[0] && copy[2] == values[2])
            } // the copy goes with both boxes still in it
            #expect(first != nil && second != nil)
            values.setInt64(7, at: 0) // an integer over an overflow value: its box goes
            #expect(first == nil && second != nil)
            #expect(values[0] == .int(7))
        }
        #expect(second == nil)
    }

    @Test func valuesWithoutAnEntity() {
        let values = PropertyValues([.int(1), .string("x"), .null])
        #expect(Array(values) == [.int(1), .string("x"), .null])
        let empty: PropertyValues = []
        #expect(empty.isEmpty && empty.count == 0)
    }
}
