import Foundation

extension NSPersistentStoreCoordinator {
    /// A token standing for the last transaction of each of `stores` (every store when `nil` or
    /// empty) that records persistent history; `nil` when none of them does, or when one's
    /// history can't be read (the error is logged). History fetched after it is what the
    /// stores record from now on.
    ///
    /// ```swift
    /// let token = coordinator.currentPersistentHistoryToken(fromStores: nil)
    /// ```
    public func currentPersistentHistoryToken(fromStores stores: [Any]?) -> NSPersistentHistoryToken? {
        let chosen = (stores?.isEmpty ?? true) ? persistentStores : stores!.compactMap { $0 as? NSPersistentStore }
        var tokens: [String: Int64] = [:]
        for case let store as any HistoryRecordingStore in chosen where store.history != nil {
            do {
                tokens[store.identifier] = try store.lastHistoryTransaction()
            } catch {
                CoreDataLog.error("Can't read the last persistent history transaction of the store at \(store.url?.path ?? ""): \(error)")
                return nil
            }
        }
        return tokens.isEmpty ? nil : NSPersistentHistoryToken(storeTokens: tokens)
    }
}
