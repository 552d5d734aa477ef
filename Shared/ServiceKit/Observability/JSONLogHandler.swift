import Foundation
import Logging
import Synchronization

/// A swift-log handler that writes one JSON object per line to standard output
/// (`LOG_FORMAT=json`), for log shippers that parse structured lines.
///
/// Fields: `ts` (ISO 8601 with milliseconds, UTC), `level`, `logger`, `msg`, then every metadata
/// key (request ids among them) as a string.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    let label: String

    public init(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error { merged["error"] = .string(String(reflecting: error)) }

        var text = "{\"ts\":\(Self.quote(Self.timestamp())),\"level\":\(Self.quote(event.level.rawValue))"
        text += ",\"logger\":\(Self.quote(label)),\"msg\":\(Self.quote(event.message.description))"
        for key in merged.keys.sorted() {
            text += ",\(Self.quote(key)):\(Self.quote(merged[key]!.description))"
        }
        text += "}\n"
        Self.output.withLock { _ in
            // The throwing variant: a closed pipe (a log shipper gone) must not crash the service.
            try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
        }
    }

    /// Serialises writes so lines from concurrent tasks never interleave.
    private static let output = Mutex(())

    static func timestamp() -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date())
    }

    /// A JSON string literal with the escapes RFC 8259 requires.
    public static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// Process-wide logging set-up, done once in `main`.
public enum LoggingSetup {
    public static func bootstrap(format: ServiceSettings.LogFormat, level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            switch format {
            case .json:
                return JSONLogHandler(label: label, level: level)
            case .text:
                var handler = StreamLogHandler.standardOutput(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }
}
