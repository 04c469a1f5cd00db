import Testing

/// `TestStoreKind.available` leaves PostgreSQL out without a server: the seed and merging
/// scenarios then run on SQLite only, which this test's skip note makes visible once.
@Suite struct TestStoreKindTests {
    @Test(PostgreSQLTestDatabase.skipUnlessServer(
        "the seed and merging scenarios (arguments: TestStoreKind.available) run on SQLite only, not on PostgreSQL"))
    func theScenariosRunOnPostgreSQLWithAServer() {
        #expect(TestStoreKind.available == [.sqlite, .postgreSQL])
    }
}
