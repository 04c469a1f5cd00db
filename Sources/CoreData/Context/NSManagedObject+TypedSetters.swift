import Foundation

// Typed overloads of `setValue(_:forKey:)` (a Linux addition).
//
// Apple's `setValue(_:forKey:)` takes an `Any?`. Swift boxes the caller's value in an
// existential container for the call and destroys the container afterwards, through
// `Optional`'s value witnesses, in the caller's code (about 75 instructions for an `Int`): in a
// bulk import that sets ten integers per object, more than the library's own work on each value.
// Swift prefers an overload that takes the argument's own type over one that needs it boxed, so
// with these overloads `object.setValue(42, forKey: "quantity")` passes the integer as it is.
// Each overload does what the `Any?` method does: a plain `NSManagedObject` (no subclass, hence
// no override) is set in place; an instance of a subclass goes through the `Any?` method, so that
// an override of it runs.
//
// An override that calls `super.setValue(_:forKey:)` with an `Int`, `Int64`, `Double`, `Bool` or
// `String` reaches an overload too (Swift picks it over the `Any?` method for `super` as well).
// Calling the `Any?` method from there would run the override again, without end. So while an
// overload's call of the `Any?` method is under way for an object (`_inTypedDispatch`), the
// overloads go straight to this class's own implementation. Two differences from Apple's
// framework follow, both in overrides only: a typed `self.setValue` inside an override, for
// another key, does not run the override again; and an override entered through the `Any?`
// method that calls `super.setValue` with a typed value runs twice (the second time, its
// `super` call sets the value). Inside an override, write `super.setValue(value as Any?, forKey: key)`.

extension NSManagedObject {
    /// Sets the property named `key` to an integer, as `setValue(_:forKey:)` does with it
    /// boxed in an `Any?`, without boxing it.
    ///
    /// Linux addition: Swift picks this overload for an `Int` argument. On an instance of a
    /// subclass it calls `setValue(_:forKey:)`, so that an override of that method runs.
    ///
    /// ```swift
    /// let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
    /// item.setValue(42, forKey: "quantity")
    /// ```
    public final func setValue(_ value: Int, forKey key: String) {
        if !setInPlace(integer: Int64(value), forKey: key) { setValueThroughOverride(value, forKey: key) }
    }

    /// Sets the property named `key` to an `Int64`, as `setValue(_:forKey:)` does with it
    /// boxed in an `Any?`, without boxing it (see `setValue(_:forKey:)`).
    ///
    /// Linux addition.
    ///
    /// ```swift
    /// item.setValue(Int64(42), forKey: "quantity")
    /// ```
    public final func setValue(_ value: Int64, forKey key: String) {
        if !setInPlace(integer: value, forKey: key) { setValueThroughOverride(value, forKey: key) }
    }

    /// Sets the property named `key` to a `Double`, as `setValue(_:forKey:)` does with it
    /// boxed in an `Any?`, without boxing it (see `setValue(_:forKey:)`).
    ///
    /// Linux addition.
    ///
    /// ```swift
    /// item.setValue(9.5, forKey: "price")
    /// ```
    public final func setValue(_ value: Double, forKey key: String) {
        if !setInPlace(.double(value), kind: .double, forKey: key) { setValueThroughOverride(value, forKey: key) }
    }

    /// Sets the property named `key` to a `Bool`, as `setValue(_:forKey:)` does with it
    /// boxed in an `Any?`, without boxing it (see `setValue(_:forKey:)`).
    ///
    /// Linux addition.
    ///
    /// ```swift
    /// item.setValue(true, forKey: "isActive")
    /// ```
    public final func setValue(_ value: Bool, forKey key: String) {
        if !setInPlace(.bool(value), kind: .bool, forKey: key) { setValueThroughOverride(value, forKey: key) }
    }

    /// Sets the property named `key` to a string, as `setValue(_:forKey:)` does with it
    /// boxed in an `Any?`, without boxing it (see `setValue(_:forKey:)`).
    ///
    /// Linux addition.
    ///
    /// ```swift
    /// car.setValue("Model S", forKey: "name")
    /// ```
    public final func setValue(_ value: String, forKey key: String) {
        if !setInPlace(.string(value), kind: .string, forKey: key) { setValueThroughOverride(value, forKey: key) }
    }

    /// The `Any?` method with a typed overload's value: called dynamically, so that an override
    /// runs, unless an overload's call is already under way for this object (an override's
    /// `super.setValue` with a typed value): then this class's own implementation.
    ///
    /// Not inlined, and generic: the value is boxed in an `Any?` here, not in the overload,
    /// whose in-place path then needs no stack space for a box (nor the stack check guarding it).
    /// Only the overloads' non-optional types come here (an `Optional` would box as a non-`nil`
    /// `Any?` holding `nil`).
    @inline(never)
    private func setValueThroughOverride<Value>(_ typed: Value, forKey key: String) {
        let value: Any? = typed
        if _inTypedDispatch { return _setValueAsBase(value, forKey: key) }
        _inTypedDispatch = true
        defer { _inTypedDispatch = false }
        setValue(value, forKey: key)
    }

    /// Whether this object is a plain `NSManagedObject`, whose `setValue(_:forKey:)`,
    /// `willChangeValue(forKey:)` and `didChangeValue(forKey:)` cannot be overridden.
    @inline(__always)
    private var isPlainObject: Bool { _isPlain }

    /// The index of the property named `key`, for a write in place: on a plain object that is
    /// not a fault (whose `willChangeValue`/`didChangeValue` do nothing), with the caller's queue
    /// checked; `nil` in any other case (the caller then takes the general path).
    @inline(__always)
    private func inPlaceIndex(forKey key: String) -> Int? {
        guard isPlainObject, !_isFault else { return nil }
        _checkQueue(key)
        return layout.nameTable.index(of: key)
    }

    /// What `setValue(_:forKey:)` does with an integer for an integer attribute it fits, at
    /// ``inPlaceIndex(forKey:)``; `false`, having set nothing, in any other case.
    @inline(__always)
    private func setInPlace(integer value: Int64, forKey key: String) -> Bool {
        guard let index = inPlaceIndex(forKey: key),
              let int = StoreValue.integer(value, fitting: layout.storageKinds[index]) else { return false }
        _values.setInt64(int, at: index)
        markChanged(index)
        return true
    }

    /// As ``setInPlace(integer:forKey:)``, for a value stored as `value` in an attribute of `kind`.
    @inline(__always)
    private func setInPlace(_ value: consuming StoreValue, kind: ManagedStorageKind, forKey key: String) -> Bool {
        guard let index = inPlaceIndex(forKey: key), layout.storageKinds[index] == kind else { return false }
        _values[index] = value
        markChanged(index)
        return true
    }
}
