import StudyModels

/// What the studies page shows: those whose name or id contains the search, in one status or
/// any; closed studies only when asked for (or when the status asked for is closed), so a long
/// list stays about the studies still running.
package struct StudyListFilter: Sendable, Equatable {
    /// The longest search kept, in Unicode scalars; more is cut.
    package static let maxSearch = 100

    package var search: String
    package var status: StudyStatus?
    package var showClosed: Bool

    /// From the page's query: `q`, `status` (a status's wire name; anything else is any) and
    /// `closed=1`.
    package init(search: String?, status: String?, closed: String?) {
        let trimmed = (search ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        self.search = String(String.UnicodeScalarView(trimmed.unicodeScalars.prefix(Self.maxSearch)))
        self.status = status.flatMap(StudyStatus.init(rawValue:))
        self.showClosed = closed == "1"
    }

    package var isFiltering: Bool { !search.isEmpty || status != nil || showClosed }

    package func apply(_ studies: [StudySummary]) -> [StudySummary] {
        let folded = search.lowercased()
        return studies.filter { study in
            if let status, study.status != status { return false }
            if study.status == .deactivated, !showClosed, status != .deactivated { return false }
            guard !folded.isEmpty else { return true }
            return study.name.lowercased().contains(folded) || study.studyId.lowercased().contains(folded)
        }
    }
}
