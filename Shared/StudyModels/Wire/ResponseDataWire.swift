import Foundation
import JSONText

/// One stored response as the response service's admin API lists it
/// (`GET /admin/v1/studies/{studyId}/responses`).
public struct ResponseSummary: Codable, Sendable, Equatable {
    public var id: Int64
    /// The `ParticipantId` of the study's tables.
    public var participantId: Int64
    public var activityId: String
    /// The activity version it was sent for.
    public var version: String
    /// The later version a team chose to process it against when reprocessing it, if any.
    public var processedAgainstVersion: String?
    /// `pending`, `processed`, `error` or `forwarded`.
    public var status: String
    public var errorMessage: String?
    public var receivedAt: Date
    public var processedAt: Date?
    /// How many times processing has been tried (a response waiting for its design counts each).
    public var attempts: Int
    public var forwardAttempts: Int
    public var forwardError: String?
    public var forwardedAt: Date?

    public init(
        id: Int64, participantId: Int64, activityId: String, version: String, status: String, errorMessage: String?,
        receivedAt: Date, processedAt: Date?, attempts: Int, forwardAttempts: Int, forwardError: String?, forwardedAt: Date?,
        processedAgainstVersion: String? = nil
    ) {
        self.processedAgainstVersion = processedAgainstVersion
        self.id = id
        self.participantId = participantId
        self.activityId = activityId
        self.version = version
        self.status = status
        self.errorMessage = errorMessage
        self.receivedAt = receivedAt
        self.processedAt = processedAt
        self.attempts = attempts
        self.forwardAttempts = forwardAttempts
        self.forwardError = forwardError
        self.forwardedAt = forwardedAt
    }
}

public struct ResponseSummaryList: Codable, Sendable, Equatable {
    public var responses: [ResponseSummary]

    public init(responses: [ResponseSummary]) { self.responses = responses }
}

/// `POST /admin/v1/studies/{studyId}/responses/reprocess`: the study's failed responses to put
/// back in the queue, and the version of their activity to process them against.
public struct ReprocessRequest: Codable, Sendable, Equatable {
    public var ids: [Int64]
    /// A later version of each response's activity (nil: the version it was sent for).
    public var againstVersion: String?

    public init(ids: [Int64], againstVersion: String? = nil) {
        self.ids = ids
        self.againstVersion = againstVersion
    }
}

/// `POST /admin/v1/studies/{studyId}/responses/reprocess`: what went back to the queue.
public struct ReprocessOutcome: Codable, Sendable, Equatable {
    public var countReprocessed: Int
    /// Ids asked for that are not this study's responses in `error`.
    public var notReprocessed: [Int64]

    public init(countReprocessed: Int, notReprocessed: [Int64]) {
        self.countReprocessed = countReprocessed
        self.notReprocessed = notReprocessed
    }
}

/// A study's forwarding target as shown (never the password) and how forwarding stands
/// (`GET`/`PUT /admin/v1/studies/{studyId}/forwarding`).
public struct ForwardingView: Codable, Sendable, Equatable {
    public struct Status: Codable, Sendable, Equatable {
        /// Processed responses not forwarded yet.
        public var waiting: Int
        /// Of those, how many have failed at least once.
        public var failing: Int
        public var forwarded: Int
        public var lastForwardedAt: Date?
        public var lastError: String?

        public init(waiting: Int, failing: Int, forwarded: Int, lastForwardedAt: Date? = nil, lastError: String? = nil) {
            self.waiting = waiting
            self.failing = failing
            self.forwarded = forwarded
            self.lastForwardedAt = lastForwardedAt
            self.lastError = lastError
        }
    }

    /// `disabled`, `basic` or `oauth`.
    public var type: String
    /// What each response is sent as: `json` (the original's body) or `fhir` (a FHIR R4
    /// transaction to a FHIR server's base).
    public var format: String = "json"
    public var url: String?
    public var username: String?
    /// `***REDACTED***` when one is stored.
    public var password: String?
    public var tokenRequestURL: String?
    public var tokenField: String?
    public var header: String?
    public var updatedBy: String?
    public var updatedAt: Date?
    public var status: Status

    public init(type: String, updatedBy: String?, updatedAt: Date?, status: Status) {
        self.type = type
        self.updatedBy = updatedBy
        self.updatedAt = updatedAt
        self.status = status
    }
}

/// A column of a study table as the data grids show it.
public struct TableColumn: Codable, Sendable, Equatable {
    public var name: String
    /// `key`, `number`, `date-time`, `boolean` or `text`.
    public var type: String
    /// `Key`, `ParticipantId`, `Created` and a child's `<Parent>Id`.
    public var system: Bool
    public var maxLength: Int?
}

/// `GET /admin/v1/studies/{studyId}/tables`.
public struct ResponseTableList: Codable, Sendable, Equatable {
    public struct Table: Codable, Sendable, Equatable {
        public var name: String
        public var parent: String?
        public var children: [String]
        /// Exact for the smallest tables, up to 50,000 rows in all; past that the database's
        /// estimate (`rowsExact` false).
        public var rows: Int
        public var rowsExact: Bool?
        public var columns: [TableColumn]
    }

    /// In creation order, parents before their children.
    public var tables: [Table]
    /// How many responses failed processing, per activity that has any (with or without a table).
    public var failedByActivity: [String: Int]?
}

/// `GET /admin/v1/studies/{studyId}/tables/{table}/rows`: a page of one table.
public struct TableRowsPage: Codable, Sendable, Equatable {
    public var table: String
    public var parent: String?
    /// The tables whose rows belong to this one's.
    public var children: [String]
    public var sort: String
    /// `asc` or `desc`.
    public var order: String
    public var columns: [TableColumn]
    /// Each row its values in column order.
    public var rows: [[JSONValue]]
    /// The cursor of the next page, absent on the last.
    public var next: String?
}

/// `GET /admin/v1/studies/{studyId}/responses/daily`: responses received per UTC day, per
/// activity, over the last `days` days (today included).
public struct DailyResponses: Codable, Sendable, Equatable {
    public struct Activity: Codable, Sendable, Equatable {
        public var activityId: String
        /// Only days with responses, in order.
        public var days: [Day]

        public init(activityId: String, days: [Day]) {
            self.activityId = activityId
            self.days = days
        }
    }

    public struct Day: Codable, Sendable, Equatable {
        /// `yyyy-MM-dd`, UTC.
        public var date: String
        public var count: Int

        public init(date: String, count: Int) {
            self.date = date
            self.count = count
        }
    }

    /// The first and last day covered (`yyyy-MM-dd`, UTC).
    public var from: String
    public var to: String
    /// In activity-id order.
    public var activities: [Activity]

    public init(from: String, to: String, activities: [Activity]) {
        self.from = from
        self.to = to
        self.activities = activities
    }
}

/// Which participant number (the `ParticipantId` of the study's tables and exports) each enrolled
/// app stands for, by the SHA-256 of the participant id it was given:
/// `GET /admin/v1/studies/{studyId}/participant-numbers?appTokenSHA256=h1,h2` or `?participant=N`.
/// The registration service knows the same hash, so the console shows one identity for a person
/// without either service seeing the other's secret.
public struct ParticipantNumbers: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var participantId: Int64
        public var appTokenSHA256: String

        public init(participantId: Int64, appTokenSHA256: String) {
            self.participantId = participantId
            self.appTokenSHA256 = appTokenSHA256
        }
    }

    public var participants: [Entry]

    public init(participants: [Entry]) { self.participants = participants }
}
