import ServiceKit

/// The response service's own schema changes, applied after ServiceKit's. Append only: an
/// applied migration must never change (its checksum is checked at every start).
enum ResponseMigrations {
    static let all: [Migration] = []
}
