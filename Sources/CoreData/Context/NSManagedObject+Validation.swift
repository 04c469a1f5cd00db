import Foundation

// Validation with Core Data's error codes: each error carries the object
// (`NSValidationObjectErrorKey`), the key (`NSValidationKeyErrorKey`) and the value
// (`NSValidationValueErrorKey`); several errors come together as 1560 with `NSDetailedErrorsKey`.
extension NSManagedObject {
    internal func validateValueAgainstModel(_ value: Any?, forKey key: String) throws {
        guard let index = layout.nameTable.index(of: key) else { return }
        if let error = validationError(for: value, at: index, relationships: .proposed) { throw error }
    }

    internal func validateDeleteRules() throws {
        var errors: [any Error] = []
        for index in layout.relationshipIndexes {
            let relationship = layout.properties[index] as! NSRelationshipDescription
            guard relationship.deleteRule == .denyDeleteRule else { continue }
            let count: Int
            if relationship.isToMany {
                count = toManyList(at: index).objects.filter { !$0._isDeleted }.count
            } else {
                count = toOneObject(at: index).map { $0._isDeleted ? 0 : 1 } ?? 0
            }
            if count > 0 {
                errors.append(validationError(.relationshipDeniedDelete, index: index, value: nil,
                    "\(entity.name ?? "") can't be deleted while its relationship '\(relationship.name)' (delete rule Deny) still holds \(count) object(s)"))
            }
        }
        try CoreDataError.throwValidationErrors(errors)
    }

    internal func validateAllProperties() throws {
        fireFaultIfNeeded()
        var errors: [any Error] = []
        if type(of: self) != NSManagedObject.self {
            // A subclass may override validateValue(_:forKey:): Apple's validateForInsert/Update
            // call it for every property, so do the same (the override calls super for the model's rules).
            for property in layout.properties {
                // A composite's elements are validated with it, from its dictionary.
                if property is CompositeLeafAttribute { continue }
                // A to-many never loaded and without count rules is not fetched just to be passed along.
                if property is NSRelationshipDescription, _relations[property.index] == nil,
                   !layout.validatedIndexes.contains(property.index) { continue }
                var value = primitiveValue(at: property.index)
                do { try validateValue(&value, forKey: property.name) } catch { errors.append(error) }
            }
            try CoreDataError.throwValidationErrors(errors)
            return
        }
        for index in layout.validatedIndexes {
            let error: NSError?
            if !layout.storageKinds[index].isAttribute {
                error = validationError(for: nil, at: index, relationships: .held)
            } else {
                error = validationError(stored: storedValueForValidation(at: index), at: index)
            }
            if let error { errors.append(error) }
        }
        if _hasMistypedValue {
            // Optional attributes without rules can break only one rule: the value's type.
            for index in layout.typeCheckedIndexes {
                if let error = validationError(stored: storedValueForValidation(at: index), at: index) { errors.append(error) }
            }
        }
        try CoreDataError.throwValidationErrors(errors)
    }

    /// The attribute's value in storage form; transformable values decoded lazily stay boxed.
    private func storedValueForValidation(at index: Int) -> StoreValue {
        index < _values.count ? _values[index] : .null
    }


    internal func validationError(_ code: CoreDataError.Code, index: Int, value: Any?, _ message: String) -> NSError {
        var info: [String: Any] = [NSValidationObjectErrorKey: self, NSValidationKeyErrorKey: layout.properties[index].name]
        if let value { info[NSValidationValueErrorKey] = value }
        return CoreDataError.make(code, message, extra: info)
    }

    /// The error of the composite attribute at `index` as the object holds it, or `nil`: a value
    /// that is not a dictionary of its elements (kept in its slot when it was set), or no value
    /// at all for a required composite. Its elements are validated as attributes of their own.
    private func compositeError(_ composite: NSCompositeAttributeDescription, _ stored: StoreValue, at index: Int) -> NSError? {
        if case .object(let box) = stored { return compositeError(composite, box.value, at: index) }
        if !composite.isOptional, holdsNoValue(composite) {
            return validationError(.missingMandatoryProperty, index: index, value: nil, "\(entity.name ?? "").\(composite.name) is a required value")
        }
        return nil
    }

    /// Whether every element of `composite` is nil (no column stores the composite itself).
    private func holdsNoValue(_ composite: NSCompositeAttributeDescription) -> Bool {
        composite.leaves.allSatisfy { storedValueForValidation(at: $0.index).isNull }
    }

    /// The first rule `value` breaks as the value of the composite attribute at `index`, its
    /// elements' rules included, or `nil`.
    private func compositeError(_ composite: NSCompositeAttributeDescription, _ value: Any?, at index: Int) -> NSError? {
        let key = "\(entity.name ?? "").\(composite.name)"
        var dictionary: [String: Any] = [:]
        if let value, !StoreValue.isNull(value) {
            guard let checked = CompositeValues.dictionary(value, of: composite.elements) else {
                let elements = composite.elements.map(\.name).sorted().joined(separator: ", ")
                return validationError(.managedObjectValidation, index: index, value: value,
                    "\(key) got a value that is not a dictionary of its elements (\(elements)): \(type(of: value)) \(value)")
            }
            dictionary = checked
        }
        let values = composite.leaves.map { CompositeValues.value(in: dictionary, at: $0.elementPath.dropFirst()) }
        if values.allSatisfy({ $0 == nil }) {
            return composite.isOptional ? nil : validationError(.missingMandatoryProperty, index: index, value: nil, "\(key) is a required value")
        }
        for (leaf, value) in zip(composite.leaves, values) {
            if value == nil {
                if !leaf.isOptional && !leaf.isTransient {
                    return validationError(.missingMandatoryProperty, index: leaf.index, value: nil, "\(entity.name ?? "").\(leaf.name) is a required value")
                }
            } else if let error = validationError(for: value, at: leaf.index) {
                return error
            }
        }
        return nil
    }

    /// Which value of a relationship ``validationError(for:at:relationships:)`` checks.
    private enum RelationshipValue {
        /// None: relationships are not checked.
        case skipped
        /// The value the object holds (a save's validation).
        case held
        /// The value given (`validateValue(_:forKey:)`, which checks a candidate before it is set).
        case proposed
    }

    /// The first rule `value` breaks for the property at `index`, or `nil`.
    private func validationError(for value: Any?, at index: Int, relationships: RelationshipValue = .skipped) -> NSError? {
        let property = layout.properties[index]
        let entityName = entity.name ?? ""
        if let relationship = property as? NSRelationshipDescription {
            guard relationships != .skipped else { return nil }
            if relationship.isToMany {
                let members = relationships == .proposed ? Self.objects(from: value) : toManyList(at: index).objects
                let count = members.filter { !$0._isDeleted }.count
                if count == 0 && !relationship.isOptional {
                    return validationError(.missingMandatoryProperty, index: index, value: nil,
                        "\(entityName).\(relationship.name) is a required value (a non-optional to-many relationship with no objects)")
                }
                if relationship.minCount > 0 && count < relationship.minCount && !(relationship.isOptional && count == 0) {
                    return validationError(.relationshipLacksMinimumCount, index: index, value: nil,
                        "\(entityName).\(relationship.name) holds \(count) object(s), fewer than its minimum of \(relationship.minCount)")
                }
                if relationship.maxCount > 0 && count > relationship.maxCount {
                    return validationError(.relationshipExceedsMaximumCount, index: index, value: nil,
                        "\(entityName).\(relationship.name) holds \(count) object(s), more than its maximum of \(relationship.maxCount)")
                }
            } else if !relationship.isOptional {
                let target = relationships == .proposed ? value as? NSManagedObject : toOneObject(at: index)
                if target == nil || target!._isDeleted {
                    return validationError(.missingMandatoryProperty, index: index, value: nil, "\(entityName).\(relationship.name) is a required value")
                }
            }
            return nil
        }
        guard let attribute = property as? NSAttributeDescription else { return nil }
        if let composite = attribute as? NSCompositeAttributeDescription { return compositeError(composite, value, at: index) }
        guard let value, !StoreValue.isNull(value) else { return validationError(stored: .null, at: index) }
        if let converted = StoreValue.convert(value, to: attribute.attributeType) {
            return validationError(stored: converted, at: index)
        }
        return validationError(stored: .object(ObjectBox(value)), at: index)
    }

    /// The first rule a stored value breaks for the attribute at `index`, or `nil`. Works on the
    /// storage form directly: no boxing unless there is an error to report or a predicate to run.
    private func validationError(stored: StoreValue, at index: Int) -> NSError? {
        let attribute = layout.properties[index] as! NSAttributeDescription
        var key: String { "\(entity.name ?? "").\(attribute.name)" } // only built for an error
        if let composite = attribute as? NSCompositeAttributeDescription { return compositeError(composite, stored, at: index) }
        if case .null = stored {
            // An element of an optional composite that holds no value at all is not required.
            if let leaf = attribute as? CompositeLeafAttribute, let composite = leaf.composite, composite.isOptional,
               holdsNoValue(composite) {
                return nil
            }
            if !attribute.isOptional && !attribute.isTransient {
                return validationError(.missingMandatoryProperty, index: index, value: nil, "\(key) is a required value")
            }
            return nil
        }
        if case .object(let box) = stored, !attribute.holdsObjects {
            // Kept as given by setValue(_:forKey:): convertible (e.g. a number for a Double), or of the wrong type.
            guard let converted = StoreValue.convert(box.value, to: attribute.attributeType) else {
                let integers: Set<NSAttributeType> = [.integer16AttributeType, .integer32AttributeType, .integer64AttributeType]
                if integers.contains(attribute.attributeType), let number = box.value as? NSNumber {
                    return validationError(.managedObjectValidation, index: index, value: box.value,
                        "\(key) got \(number), which does not fit an \(attribute.attributeType.typeName) attribute")
                }
                return validationError(.managedObjectValidation, index: index, value: box.value,
                    "\(key) got a value of the wrong type: \(type(of: box.value)) where the model says \(attribute.attributeValueClassName ?? "\(attribute.attributeType)")")
            }
            return validationError(stored: converted, at: index)
        }
        guard attribute.hasValueRules else { return nil }
        let value: Any = stored.objectValue ?? NSNull()
        switch stored {
        case .int(let v): if let error = bounds(Double(v), attribute, index, value, key) { return error }
        case .double(let v): if let error = bounds(v, attribute, index, value, key) { return error }
        case .decimal(let v): if let error = bounds(v.nearestDouble, attribute, index, value, key) { return error }
        case .date(let date):
            let t = date.timeIntervalSinceReferenceDate
            if let min = attribute.minimum, t < min {
                return validationError(.dateTooSoon, index: index, value: value, "\(key) (\(date)) is earlier than the earliest allowed date")
            }
            if let max = attribute.maximum, t > max {
                return validationError(.dateTooLate, index: index, value: value, "\(key) (\(date)) is later than the latest allowed date")
            }
        case .string(let s):
            let length = s.utf16.count
            if let min = attribute.minimum, Double(length) < min {
                return validationError(.stringTooShort, index: index, value: value, "\(key) is too short (\(length) characters; the minimum is \(Int(min)))")
            }
            if let max = attribute.maximum, Double(length) > max {
                return validationError(.stringTooLong, index: index, value: value, "\(key) is too long (\(length) characters; the maximum is \(Int(max)))")
            }
            if let pattern = attribute.regularExpression, !pattern.isEmpty {
                // The whole string, as `MATCHES` (`$` would also match before a final newline).
                let matches = (try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z")).map {
                    $0.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
                } ?? false
                if !matches {
                    return validationError(.stringPatternMatching, index: index, value: value, "\(key) (\"\(s)\") does not match the pattern \(pattern)")
                }
            }
        case .data(let d):
            if let min = attribute.minimum, Double(d.count) < min {
                return validationError(.managedObjectValidation, index: index, value: value, "\(key) is shorter than \(Int(min)) bytes")
            }
            if let max = attribute.maximum, Double(d.count) > max {
                return validationError(.managedObjectValidation, index: index, value: value, "\(key) is longer than \(Int(max)) bytes")
            }
        default: break
        }
        for (offset, predicate) in attribute.validationPredicates.enumerated() where !predicate.evaluate(with: value) {
            let warning = offset < attribute.validationWarnings.count ? "\(attribute.validationWarnings[offset])" : "\(key) does not satisfy its validation predicate"
            let error = validationError(.managedObjectValidation, index: index, value: value, warning)
            var info = error.userInfo
            info[NSValidationPredicateErrorKey] = predicate
            return NSError(domain: error.domain, code: error.code, userInfo: info)
        }
        return nil
    }

    private func bounds(_ number: Double, _ attribute: NSAttributeDescription, _ index: Int, _ value: Any, _ key: String) -> NSError? {
        if let min = attribute.minimum, number < min {
            return validationError(.numberTooSmall, index: index, value: value, "\(key) (\(value)) is smaller than the minimum \(min)")
        }
        if let max = attribute.maximum, number > max {
            return validationError(.numberTooLarge, index: index, value: value, "\(key) (\(value)) is larger than the maximum \(max)")
        }
        return nil
    }

    /// Relationships must not point at objects of another context (seed 004's mistake). The
    /// error names the relationship; nothing is written and the context stays usable.
    internal func validateRelationshipContexts() throws {
        guard !_relations.isEmpty else { return }
        for (index, relation) in _relations {
            let targets: [NSManagedObject]
            switch relation {
            case .toOne(let object): targets = object.map { [$0] } ?? []
            case .toMany(let list): targets = list.objects
            }
            if let foreign = targets.first(where: { $0._context !== _context }) {
                let name = layout.properties[index].name
                throw validationError(.externalRelationship, index: index, value: foreign,
                    "Illegal attempt to establish a relationship '\(name)' between objects in different contexts: \(entity.name ?? "") belongs to one context, the \(foreign.entity.name ?? "") object to \(foreign._context == nil ? "no context" : "another context"). Fetch it in this context with object(with: objectID) instead.")
            }
        }
    }
}
