import Logging
import Synchronization

/// Log lines captured by `CapturingLogHandler`, for tests that check what is (not) logged.
public final class CapturedLogs: Sendable {
    public init() {}
    public struct Line: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    public let lines = Mutex<[Line]>([])

    /// Whether any captured message or metadata value contains `text`.
    public func contains(_ text: String) -> Bool {
        lines.withLock { lines in
            lines.contains { $0.message.contains(text) || $0.metadata.values.contains { $0.contains(text) } }
        }
    }
}

public struct CapturingLogHandler: LogHandler {
    let records: CapturedLogs
    public var logLevel: Logger.Level = .trace
    public var metadata: Logger.Metadata = [:]

    public init(records: CapturedLogs) {
        self.records = records
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }.mapValues { $0.description }
        records.lines.withLock { $0.append(.init(level: event.level, message: event.message.description, metadata: merged)) }
    }
}
