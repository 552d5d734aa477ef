import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// A study's sites, with their invitations and participants counted.
package struct SiteStore: Sendable {
    /// What an invitation needs of a site.
    package struct Reference: Sendable, Equatable {
        package var id: UUID
        package var name: String
        package var decommissioned: Bool

        package init(id: UUID, name: String, decommissioned: Bool) {
            self.id = id
            self.name = name
            self.decommissioned = decommissioned
        }
    }

    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// Every site in name order, and the study's own counts (invitations to no site included);
    /// without counts when `counted` is false (a page that only names the sites, the participants
    /// page's filter, asks without).
    package func sites(studyId: String, counted: Bool = true) async throws -> SiteList {
        let counts = counted ? try await counts(studyId: studyId) : nil
        let rows = try await client.query(
            """
            SELECT id, name, location, target_enrollment, created_at, decommissioned_at FROM study_sites
            WHERE study_id = \(studyId) ORDER BY lower(name), id
            """, logger: logger)
        var sites: [Site] = []
        for try await (id, name, location, target, created, decommissioned) in rows.decode(
            (UUID, String, String, Int?, Date, Date?).self)
        {
            sites.append(Site(
                siteId: id.uuidString.lowercased(), name: name, location: location, targetEnrollment: target, createdAt: created,
                decommissionedAt: decommissioned, counts: counts.map { $0.sites[id] ?? InvitationCounts() }))
        }
        return SiteList(sites: sites, study: counts?.study)
    }

    /// Invitations by state and participants in the study now, per site (nil: no site), and the
    /// study's own: as kept (`study_site_counts`), with the pending invitations that have expired
    /// counted now through their index by expiry.
    private func counts(studyId: String) async throws -> (sites: [UUID?: InvitationCounts], study: InvitationCounts) {
        var counts: [UUID?: InvitationCounts] = [:]
        // One statement, so the kept counts and the expired ones are of the same moment.
        for try await (site, members, pending, enrolled, withdrawn, revoked, expired) in try await client.query(
            """
            WITH expired AS (
                SELECT site_id, count(*)::int AS invitations FROM invitations
                WHERE study_id = \(studyId) AND revoked_at IS NULL AND enrolled_at IS NULL AND expires_at <= now()
                GROUP BY site_id)
            SELECT c.site_id, c.members, c.pending, c.enrolled, c.withdrawn, c.revoked, coalesce(e.invitations, 0)
            FROM study_site_counts c LEFT JOIN expired e ON e.site_id IS NOT DISTINCT FROM c.site_id
            WHERE c.study_id = \(studyId)
            """, logger: logger
        ).decode((UUID?, Int, Int, Int, Int, Int, Int).self) {
            counts[site] = InvitationCounts(
                invited: pending - expired, enrolled: enrolled, withdrawn: withdrawn, revoked: revoked, expired: expired,
                participants: members)
        }
        var study = InvitationCounts()
        for count in counts.values {
            study.invited += count.invited
            study.enrolled += count.enrolled
            study.withdrawn += count.withdrawn
            study.revoked += count.revoked
            study.expired += count.expired
            study.participants += count.participants
        }
        return (counts, study)
    }

    /// Refusals are `RegistrationAdminError`s.
    package func create(studyId: String, _ request: SiteRequest, actor: String) async throws -> Site {
        let id = UUID()
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    """
                    INSERT INTO study_sites (id, study_id, name, location, target_enrollment, created_by)
                    VALUES (\(id), \(studyId), \(request.name), \(request.location ?? ""), \(request.targetEnrollment), \(actor))
                    """, logger: logger)
                try await audit.record(
                    actor: actor, action: "sites.created", studyId: studyId,
                    details: ["siteId": id.uuidString.lowercased(), "name": request.name], on: connection)
            }
        } catch where PostgresErrors.isUniqueViolation(error) {
            throw RegistrationAdminError.siteNameTaken
        }
        guard let site = try await site(studyId: studyId, siteId: id) else { throw RegistrationAdminError.noSite }
        return site
    }

    /// Changes the name, location and target; `decommissioned` (when given) takes the site out of
    /// use or puts it back.
    package func update(studyId: String, siteId: UUID, _ request: SiteRequest, actor: String) async throws -> Site {
        let updated: Bool
        do {
            updated = try await client.withTransaction(logger: logger) { connection -> Bool in
                let rows = try await connection.query(
                    """
                    UPDATE study_sites SET name = \(request.name), location = \(request.location ?? ""),
                        target_enrollment = \(request.targetEnrollment),
                        decommissioned_at = CASE WHEN \(request.decommissioned)::boolean IS NULL THEN decommissioned_at
                            WHEN \(request.decommissioned)::boolean THEN coalesce(decommissioned_at, now()) ELSE NULL END
                    WHERE id = \(siteId) AND study_id = \(studyId)
                    RETURNING 1
                    """, logger: logger)
                var found = false
                for try await _ in rows { found = true }
                guard found else { return false }
                var details = ["siteId": siteId.uuidString.lowercased(), "name": request.name]
                if let decommissioned = request.decommissioned { details["decommissioned"] = String(decommissioned) }
                try await audit.record(actor: actor, action: "sites.updated", studyId: studyId, details: details, on: connection)
                return true
            }
        } catch where PostgresErrors.isUniqueViolation(error) {
            throw RegistrationAdminError.siteNameTaken
        }
        guard updated, let site = try await site(studyId: studyId, siteId: siteId) else { throw RegistrationAdminError.noSite }
        return site
    }

    package func site(studyId: String, siteId: UUID) async throws -> Site? {
        try await sites(studyId: studyId).sites.first { $0.siteId == siteId.uuidString.lowercased() }
    }

    /// The study's sites, found by id or by name (without case), for invitations that name one.
    package func references(studyId: String) async throws -> [String: Reference] {
        let rows = try await client.query(
            "SELECT id, name, decommissioned_at IS NOT NULL FROM study_sites WHERE study_id = \(studyId)", logger: logger)
        var found: [String: Reference] = [:]
        for try await (id, name, decommissioned) in rows.decode((UUID, String, Bool).self) {
            let reference = Reference(id: id, name: name, decommissioned: decommissioned)
            found[id.uuidString.lowercased()] = reference
            found[name.lowercased()] = reference
        }
        return found
    }
}
