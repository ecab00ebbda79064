internal import CFeedSyncSystem
import FeedSyncFeed
import FeedSyncMarkup
import FeedSyncModel
import Foundation
import GRDB
import Synchronization

// What a data home remembers between runs (the cache's size).

extension Store {
    public func setting(_ name: String) async throws(StoreError) -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT value FROM setting WHERE name = ?", arguments: [name])
        }
    }

    public func setSetting(_ name: String, _ value: String) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql:
                    "INSERT INTO setting (name, value) VALUES (?, ?) "
                    + "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                arguments: [name, value])
        }
    }
}
