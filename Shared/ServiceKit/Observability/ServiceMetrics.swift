import Foundation
import Logging
import PostgresNIO
import Prometheus
import Synchronization

/// The Prometheus registry of one service instance, and the metrics ServiceKit records.
///
/// Each application owns its registry instead of bootstrapping the process-wide
/// `MetricsSystem`, so several instances in one test process keep separate counts.
public final class ServiceMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let queues = Mutex<[QueueProbe]>([])

    /// Upper bounds of the latency histogram, from 1 ms to 10 s.
    static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    public init() {}

    /// One series of the request metrics: a method, a route template and a status.
    private struct RequestSeries: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    /// The request metrics' series met so far. The registry finds a series by building its
    /// labels' text and looking it up under a lock, which cost more than a cached app-API
    /// request's own work; the series are few (route templates, not paths).
    private let requestSeries = Mutex<[RequestSeries: (requests: Counter, duration: DurationHistogram)]>([:])

    /// The methods counted by name; any other is counted as `other` (a client chooses the
    /// method, and each name would be a series kept for good).
    static let countedMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// Counts a finished request and records its latency, by route template and status.
    package func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let series = RequestSeries(method: Self.countedMethods.contains(method) ? method : "other", route: route, status: status)
        let metrics = requestSeries.withLock { $0[series] } ?? makeRequestSeries(series)
        metrics.requests.increment()
        metrics.duration.record(duration)
    }

    private func makeRequestSeries(_ series: RequestSeries) -> (requests: Counter, duration: DurationHistogram) {
        let labels = [("method", series.method), ("route", series.route), ("status", String(series.status))]
        let made = (
            requests: registry.makeCounter(
                descriptor: .init(
                    namespace: "studystack", subsystem: "http", metricName: "requests", unitName: "total",
                    helpText: "HTTP requests answered, by method, route template and status."),
                labels: labels),
            duration: registry.makeDurationHistogram(
                descriptor: .init(
                    namespace: "studystack", subsystem: "http", metricName: "request_duration", unitName: "seconds",
                    helpText: "Time from receiving a request to producing its response."),
                labels: labels,
                buckets: Self.latencyBuckets)
        )
        requestSeries.withLock { $0[series] = made }
        return made
    }

    /// Counts one settled item of a work queue: `studystack_queue_items_total{queue, outcome}`.
    func recordQueueItem(queue: String, outcome: String) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "studystack", subsystem: "queue", metricName: "items", unitName: "total",
                helpText: "Items of a work queue settled, by queue and outcome (done or the queue's own word, retry, rejected, gave_up)."),
            labels: [("queue", queue), ("outcome", outcome)]
        ).increment()
    }

    /// Counts one round of a queue worker by outcome (`completed`, `failed`, `timed_out`); a
    /// completed round also sets `studystack_queue_last_round_timestamp_seconds{queue}`.
    func recordQueueRound(worker: String, outcome: String) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "studystack", subsystem: "queue", metricName: "rounds", unitName: "total",
                helpText: "Rounds of a queue worker, by outcome (completed, failed, timed_out)."),
            labels: [("queue", worker), ("outcome", outcome)]
        ).increment()
        guard outcome == "completed" else { return }
        registry.makeGauge(
            descriptor: .init(
                namespace: "studystack", subsystem: "queue", metricName: "last_round_timestamp", unitName: "seconds",
                helpText: "When a queue worker last completed a round (Unix time); a worker that stops shows here."),
            labels: [("queue", worker)]
        ).set(Date().timeIntervalSince1970)
    }

    /// Counts one change notification heard: `studystack_change_notifications_total{channel}`.
    /// Every instance hears every notification on its channels, so instances whose counts agree
    /// have heard the same changes.
    func recordChangeNotification(channel: String) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "studystack", subsystem: "change", metricName: "notifications", unitName: "total",
                helpText: "PostgreSQL notifications heard by this instance's change listener, by channel."),
            labels: [("channel", channel)]
        ).increment()
    }

    /// Counts one outcome of a background worker: `studystack_<worker>_<event>_total` with an
    /// `outcome` label (and any others), for example mail deliveries by outcome.
    public func countWorkerOutcome(
        worker: String, event: String, outcome: String, help: String, labels: [(String, String)] = []
    ) {
        registry.makeCounter(
            descriptor: .init(namespace: "studystack", subsystem: worker, metricName: event, unitName: "total", helpText: help),
            labels: labels + [("outcome", outcome)]
        ).increment()
    }

    /// Reports a work queue's backlog on every scrape: `studystack_queue_depth{queue=...}` and
    /// `studystack_queue_oldest_seconds{queue=...}`. `query` returns one row: the number of items
    /// waiting (int) and the age in seconds of the oldest (float8, NULL when none wait).
    public func watchQueue(_ queue: String, query: PostgresQuery) {
        queues.withLock { $0.append(QueueProbe(queue: queue, query: query)) }
    }

    var watchedQueues: [QueueProbe] { queues.withLock { $0 } }

    func setQueueGauges(queue: String, depth: Int, oldestSeconds: Double) {
        registry.makeGauge(
            descriptor: .init(
                namespace: "studystack", subsystem: "queue", metricName: "depth", unitName: "",
                helpText: "Items waiting in a work queue (due or backing off), read at scrape time."),
            labels: [("queue", queue)]
        ).set(Double(depth))
        registry.makeGauge(
            descriptor: .init(
                namespace: "studystack", subsystem: "queue", metricName: "oldest", unitName: "seconds",
                helpText: "Age of the oldest item waiting in a work queue; 0 when it is empty."),
            labels: [("queue", queue)]
        ).set(oldestSeconds)
    }

    /// Sets a database pool gauge.
    func setPoolGauge(_ name: String, help: String, labels: [(String, String)] = [], value: Double) {
        registry.makeGauge(
            descriptor: .init(namespace: "studystack", subsystem: "db_pool", metricName: name, unitName: "", helpText: help),
            labels: labels
        ).set(value)
    }

    /// The Prometheus text exposition of everything recorded.
    public func exposition() -> String { registry.emitToString() }
}

/// A work queue whose backlog `/metrics` reports.
struct QueueProbe: Sendable {
    let queue: String
    let query: PostgresQuery
}

/// Reads this process's connection pool from PostgreSQL's `pg_stat_activity` when `/metrics`
/// is scraped. postgres-nio does not publish its pool state, but every connection of this
/// process carries a unique `application_name`, so the server's view is exact.
package struct PoolGaugeReader: Sendable {
    let client: PostgresClient
    let applicationName: String
    let maxConnections: Int
    let metrics: ServiceMetrics
    let logger: Logger

    package init(
        client: PostgresClient, applicationName: String, maxConnections: Int, metrics: ServiceMetrics, logger: Logger
    ) {
        self.client = client
        self.applicationName = applicationName
        self.maxConnections = maxConnections
        self.metrics = metrics
        self.logger = logger
    }

    package func update() async {
        metrics.setPoolGauge(
            "max_connections", help: "Largest number of connections the pool may open.", value: Double(maxConnections))
        var counts = ["active": 0, "idle": 0, "idle in transaction": 0]
        do {
            try await withDeadline(.seconds(1)) { [client, applicationName, logger] in
                let rows = try await client.query(
                    """
                    SELECT coalesce(state, 'unknown'), count(*)::int FROM pg_stat_activity
                    WHERE application_name = \(applicationName) AND pid <> pg_backend_pid()
                    GROUP BY 1
                    """, logger: logger)
                var found: [String: Int] = [:]
                for try await (state, count) in rows.decode((String, Int).self) { found[state] = count }
                return found
            }.forEach { counts[$0.key] = $0.value }
            metrics.setPoolGauge("up", help: "1 when the database answered the last scrape, 0 otherwise.", value: 1)
        } catch {
            metrics.setPoolGauge("up", help: "1 when the database answered the last scrape, 0 otherwise.", value: 0)
        }
        for (state, count) in counts {
            metrics.setPoolGauge(
                "connections", help: "Open connections of this process's pool by state (the scrape's own excluded).",
                labels: [("state", state)], value: Double(count))
        }
        await updateQueues()
    }

    /// Each watched queue's backlog. A queue whose query fails or takes over a second keeps its
    /// last values; `db_pool_up` already says when the database is not answering.
    private func updateQueues() async {
        for probe in metrics.watchedQueues {
            do {
                let (depth, oldest) = try await withDeadline(.seconds(1)) { [client, logger] in
                    var row: (Int, Double?) = (0, nil)
                    for try await found in try await client.query(probe.query, logger: logger).decode((Int, Double?).self) {
                        row = found
                    }
                    return row
                }
                metrics.setQueueGauges(queue: probe.queue, depth: depth, oldestSeconds: oldest ?? 0)
            } catch {
                logger.debug("queue gauge not read", metadata: ["queue": "\(probe.queue)", "error": "\(error)"])
            }
        }
    }
}
