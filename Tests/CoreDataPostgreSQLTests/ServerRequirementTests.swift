import Testing

/// In CI (`COREDATA_POSTGRES_REQUIRED=1`, set by `.ci/run`) the PostgreSQL tests must run: a run
/// without `COREDATA_POSTGRES_URL` fails here instead of skipping them all. (An unreachable server
/// fails the tests themselves, which connect.)
@Suite struct ServerRequirementTests {
    @Test func aServerIsConfiguredWhereOneIsRequired() {
        #expect(!PostgreSQLTestServer.isRequired || PostgreSQLTestServer.url != nil,
                "COREDATA_POSTGRES_REQUIRED=1 but COREDATA_POSTGRES_URL is not set: the PostgreSQL tests would skip")
    }
}
