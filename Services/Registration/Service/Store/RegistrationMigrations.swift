import ServiceKit

/// The registration service's own schema changes, applied after ServiceKit's. Append only: an
/// applied migration must never change (its checksum is checked at every start).
enum RegistrationMigrations {
    static let all: [Migration] = []
}
