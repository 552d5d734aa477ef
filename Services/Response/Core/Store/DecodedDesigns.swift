import JSONText
import StudyModels
import Synchronization

/// The designs FHIR pages have decoded lately, by study, activity and version. A published
/// version's design never changes, and decoding one (tens of KB of JSON) costs more than mapping
/// a page's responses: each read and search would decode the same few designs again. Bounded:
/// past `capacity` the longest unused is dropped, so a deployment of many studies holds at most
/// that many.
package final class DecodedDesigns: Sendable {
    package static let capacity = 64

    private struct Held {
        var designs: [ScalarKey: ActivityDesign] = [:]
        /// Keys from the longest unused to the latest used.
        var order: [ScalarKey] = []
    }

    private let held = Mutex(Held())

    package init() {}

    static func key(studyKey: String, activityId: String, version: String) -> ScalarKey {
        // NUL is in none of the three (PostgreSQL's text holds none).
        ScalarKey("\(studyKey)\u{0}\(activityId)\u{0}\(version)")
    }

    package func design(studyKey: String, activityId: String, version: String) -> ActivityDesign? {
        let key = Self.key(studyKey: studyKey, activityId: activityId, version: version)
        return held.withLock { held in
            guard let design = held.designs[key] else { return nil }
            if let index = held.order.firstIndex(of: key) { held.order.remove(at: index) }
            held.order.append(key)
            return design
        }
    }

    package func keep(_ design: ActivityDesign, studyKey: String, activityId: String, version: String) {
        let key = Self.key(studyKey: studyKey, activityId: activityId, version: version)
        held.withLock { held in
            if held.designs.updateValue(design, forKey: key) != nil, let index = held.order.firstIndex(of: key) {
                held.order.remove(at: index)
            }
            held.order.append(key)
            while held.order.count > Self.capacity { held.designs[held.order.removeFirst()] = nil }
        }
    }

    package var count: Int { held.withLock { $0.designs.count } }
}
