import ServiceKit

/// The study-metadata service's own schema changes, applied after ServiceKit's. Append only: an
/// applied migration must never change (its checksum is checked at every start).
enum StudyMetadataMigrations {
    static let all: [Migration] = []
}
