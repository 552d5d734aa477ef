import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// An app's accounts, as the admin API lists them: whether or not they joined a study.
package struct AppUserDirectory: Sendable {
    package struct Query: Sendable {
        package var appId: String
        /// One of `AppUserList.states`.
        package var state: String?
        /// Its `search` is part of an e-mail address (compared case-folded).
        package var page: ListPage
        /// One account only.
        package var userId: UUID?

        package init(appId: String, state: String? = nil, page: ListPage, userId: UUID? = nil) {
            (self.appId, self.state, self.page, self.userId) = (appId, state, page, userId)
        }
    }

    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// One page, in account-id order (`after` continues from the last one).
    package func users(_ query: Query) async throws -> AppUserList {
        let search = ListSearch(query.page.search.map(EmailKey.of))
        let rows = try await client.query(
            """
            SELECT p.user_id, p.email, p.org_id, p.verified, a.locked_until, p.disabled_at, p.created_at,
                   (SELECT max(s.last_used_at) FROM participant_sessions s WHERE s.user_id = p.user_id),
                   coalesce((SELECT array_agg(ps.study_id ORDER BY ps.study_id) FROM participant_studies ps
                             WHERE ps.user_id = p.user_id), '{}'),
                   coalesce((SELECT array_agg(ps.status ORDER BY ps.study_id) FROM participant_studies ps
                             WHERE ps.user_id = p.user_id), '{}')
            FROM participants p
            LEFT JOIN attempt_counters a
                   ON a.subject = \(Accounts.loginSubjectPrefix) || p.user_id::text AND a.locked_until > now()
            WHERE p.app_id = \(query.appId)
              AND (\(query.userId)::uuid IS NULL OR p.user_id = \(query.userId))
              AND (\(query.page.after)::uuid IS NULL OR p.user_id > \(query.page.after))
              AND (\(search?.emailPattern)::text IS NULL OR p.email_key LIKE \(search?.emailPattern)::text)
              AND (\(query.state)::text IS NULL
                   OR (\(query.state) = 'unverified' AND NOT p.verified)
                   OR (\(query.state) = 'verified' AND p.verified)
                   OR (\(query.state) = 'locked' AND a.locked_until IS NOT NULL)
                   OR (\(query.state) = 'disabled' AND p.disabled_at IS NOT NULL))
            ORDER BY p.user_id
            LIMIT \(KeysetPage<AppUserList.User, String>.fetchLimit(query.page.limit))
            """, logger: logger)
        var found: [AppUserList.User] = []
        for try await (userId, email, orgId, verified, lockedUntil, disabledAt, created, lastUsed, studies, statuses) in rows.decode(
            (UUID, String, String, Bool, Date?, Date?, Date, Date?, [String], [String]).self)
        {
            found.append(.init(
                userId: userId.uuidString.lowercased(), email: email, orgId: orgId,
                account: AccountState(verified: verified, lockedUntil: lockedUntil, disabledAt: disabledAt),
                createdAt: created, lastSignInAt: lastUsed,
                studies: zip(studies, statuses).map { AppUserList.Study(studyId: $0, status: $1) }))
        }
        let page = KeysetPage(found, limit: query.page.limit, key: \.userId)
        return AppUserList(users: page.items, next: page.next)
    }

    /// One account of the app; nil when the app has none by that id.
    package func user(appId: String, userId: UUID) async throws -> AppUserList.User? {
        try await users(Query(appId: appId, page: .one, userId: userId)).users.first
    }
}
