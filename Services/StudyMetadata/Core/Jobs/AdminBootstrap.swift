import Logging
import ServiceKit

/// Creates the first super-admin from `STUDYSTACK_ADMIN_EMAIL` and `STUDYSTACK_ADMIN_PASSWORD`
/// once the schema exists, unless a super-admin already exists (so it runs safely on every start
/// of every replica: the e-mail's unique index settles a race).
package struct AdminBootstrap: Sendable {
    package let store: AdminStore
    package let hasher: PasswordHasher
    package let audit: AuditLog
    package let settings: AdminSettings
    package let logger: Logger

    package init(store: AdminStore, hasher: PasswordHasher, audit: AuditLog, settings: AdminSettings, logger: Logger) {
        self.store = store
        self.hasher = hasher
        self.audit = audit
        self.settings = settings
        self.logger = logger
    }

    package func run() async throws {
        guard let email = settings.bootstrapEmail, let password = settings.bootstrapPassword else {
            if try await !store.superAdminExists() {
                logger.warning("no super-admin exists and STUDYSTACK_ADMIN_EMAIL is not set; the admin API cannot be used")
            }
            return
        }
        guard try await !store.superAdminExists() else { return }
        let hash = try await hasher.hash(password)
        if try await store.createAdmin(email: email, role: .superAdmin, passwordHash: hash) != nil {
            try await audit.record(actor: "system", action: "admin.bootstrapped", details: ["email": email])
            logger.info("created the first super-admin", metadata: ["email": "\(email)"])
        }
    }
}
