import Logging
import ServiceKit

/// Creates the first super-admin from `STUDYSTACK_ADMIN_EMAIL` and `STUDYSTACK_ADMIN_PASSWORD`
/// once the schema exists, unless a super-admin already exists (so it runs safely on every start
/// of every replica: the e-mail's unique index settles a race).
struct AdminBootstrap: Sendable {
    let store: AdminStore
    let hasher: PasswordHasher
    let audit: AuditLog
    let settings: AdminSettings
    let logger: Logger

    func run() async throws {
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
