import ServiceKit

/// The study-metadata service's own schema changes, applied after ServiceKit's. Append only: an
/// applied migration must never change (its checksum is checked at every start).
enum StudyMetadataMigrations {
    static let all: [Migration] = [
        Migration(
            component: "study-metadata", version: 1, name: "admin_accounts",
            statements: [
                """
                CREATE TABLE admins (
                    id uuid PRIMARY KEY,
                    email text NOT NULL,
                    password_hash text,
                    role text NOT NULL CHECK (role IN ('super_admin', 'admin')),
                    failed_logins integer NOT NULL DEFAULT 0,
                    locked_until timestamptz,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    disabled_at timestamptz
                )
                """,
                "CREATE UNIQUE INDEX admins_email ON admins (lower(email))",
                """
                CREATE TABLE admin_sessions (
                    token_hash text PRIMARY KEY,
                    admin_id uuid NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    expires_at timestamptz NOT NULL,
                    revoked_at timestamptz
                )
                """,
                "CREATE INDEX admin_sessions_admin ON admin_sessions (admin_id)",
                """
                CREATE TABLE admin_invitations (
                    token_hash text PRIMARY KEY,
                    admin_id uuid NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
                    expires_at timestamptz NOT NULL,
                    used_at timestamptz
                )
                """,
                """
                CREATE TABLE study_roles (
                    admin_id uuid NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
                    study_id text NOT NULL,
                    role text NOT NULL CHECK (role IN ('study_admin', 'editor', 'viewer')),
                    granted_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (admin_id, study_id)
                )
                """,
            ]
        )
    ]
}
