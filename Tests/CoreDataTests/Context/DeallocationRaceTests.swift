import Foundation
import Testing
@testable import CoreData

/// A context holds its objects unretained: an object whose last reference goes on another
/// thread leaves the registry in its `deinit`, under the registry's lock. Between the moment its
/// strong count reaches zero and that removal, the registry still lists it; these check that
/// nothing takes a strong reference to it then (it would outlive the object: the process stops
/// with "deallocated with non-zero retain count"), and that a context going at that moment waits
/// for the `deinit`, which reaches the context through a pointer it read before.
@Suite("Objects deallocated on another thread")
struct DeallocationRaceTests {
    /// A lookup by ID while the object is being deallocated finds nothing, and a new object
    /// for the ID then takes its place, which the dying object's `deinit` leaves alone.
    @Test func aLookupSkipsAnObjectBeingDeallocated() throws {
        let stack = try TestStack(model: Self.model())
        let context = stack.context
        let pause = Pause()
        let id = try Self.releaseOnAnotherThread(pausing: pause) {
            let car = stack.insert("Car", ["name": "a"])
            try context.save()
            return car
        }
        #expect(context.registeredObject(for: id) == nil, "the dying object is not handed out")
        #expect(context.registryCount == 0, "it was detached: its deinit, which had not reached the context, never will")
        let fresh = context.object(with: id)
        #expect(fresh.value(forKey: "name") as? String == "a")
        #expect(context.registeredObject(for: id) === fresh)
        pause.resumeAndWait()
        #expect(context.registeredObject(for: id) === fresh, "the dying object's deinit left the new one registered")
        #expect(context.registeredObjects.count == 1)
    }

    /// A context whose last reference goes while one of its objects is being deallocated on
    /// another thread (its `deinit` not yet at the context) leaves that object out of the objects
    /// it retains and detaches it: the context goes at once, and the `deinit` never reaches it.
    @Test func aContextGoingWaitsForAnObjectBeingDeallocated() throws {
        let stack = try TestStack(model: Self.model())
        stack.insert("Car", ["name": "a"])
        stack.insert("Car", ["name": "b"])
        try stack.context.save()
        let holder = Handoff(NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType))
        holder.value!.persistentStoreCoordinator = stack.coordinator
        let pause = Pause()
        var kept: NSManagedObject?
        _ = try Self.releaseOnAnotherThread(pausing: pause) {
            let cars = try holder.value!.performAndWait {
                try holder.value!.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).sorted { ($0.value(forKey: "name") as! String) < ($1.value(forKey: "name") as! String) }
            }
            kept = cars[1]
            return cars[0]
        }
        let contextGone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            holder.value = nil
            contextGone.signal()
        }
        #expect(contextGone.wait(timeout: .now() + 10) == .success, "the context does not wait for a deinit that will not reach it")
        pause.resumeAndWait()
        #expect(kept?.managedObjectContext == nil, "the living object was detached")
        #expect(kept?.value(forKey: "name") as? String == "b")
    }

    /// An object whose own stored property holds the last reference to its context: the
    /// context goes inside the object's teardown, on the same thread, before `NSManagedObject`'s
    /// `deinit` runs. It must neither wait for that `deinit` (further up the same stack) nor be
    /// reached by it once gone.
    @Test func aContextReleasedByItsObjectsTeardownGoes() throws {
        let stack = try TestStack(model: Self.model())
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let holder: Handoff<NSManagedObject>
        do {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = stack.coordinator
            let car = try context.performAndWait { try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))[0] }
            (car as! PausingCar).owner = context
            holder = Handoff(car)
        }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            holder.value = nil // the car, then (from its stored property) the context
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success, "the release finished")
    }

    private static func model() -> NSManagedObjectModel {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = NSStringFromClass(PausingCar.self)
        return model
    }

    /// Makes an object with `make`, releases its last reference on another thread, and returns
    /// (with its ID) once that thread is paused in the object's `deinit`, before
    /// `NSManagedObject`'s own `deinit` has run.
    private static func releaseOnAnotherThread(pausing pause: Pause, _ make: () throws -> NSManagedObject) throws -> NSManagedObjectID {
        let handoff: Handoff<NSManagedObject>
        let id: NSManagedObjectID
        do {
            let object = try make()
            try #require(object is PausingCar)
            (object as! PausingCar).pause = pause
            id = object.objectID
            handoff = Handoff(object)
        }
        DispatchQueue.global().async {
            handoff.value = nil
            pause.finished.signal()
        }
        try #require(pause.entered.wait(timeout: .now() + 10) == .success, "the object's deinit started")
        return id
    }
}

/// Holds a value for another thread to release.
private final class Handoff<Value>: @unchecked Sendable {
    var value: Value?
    init(_ value: Value) { self.value = value }
}

/// Where a ``PausingCar``'s `deinit` stops, and how the test lets it go on.
final class Pause: @unchecked Sendable {
    let entered = DispatchSemaphore(value: 0)
    let resume = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)

    func resumeAndWait() {
        resume.signal()
        #expect(finished.wait(timeout: .now() + 10) == .success, "the object's deinit finished")
    }
}

/// A car whose `deinit` (which runs before `NSManagedObject`'s, with the strong count already
/// at zero) stops until its ``Pause`` is resumed.
final class PausingCar: NSManagedObject {
    var pause: Pause?
    /// Holds a context strongly (``DeallocationRaceTests/aContextReleasedByItsObjectsTeardownGoes()``).
    var owner: NSManagedObjectContext?

    deinit {
        if let pause {
            pause.entered.signal()
            pause.resume.wait()
        }
    }
}
