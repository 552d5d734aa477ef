import Foundation

/// One enrollment-token batch, as the response service's admin API lists it.
public struct TokenBatch: Codable, Sendable, Equatable {
    public var batchId: UUID
    public var count: Int
    /// Tokens a participant has spent.
    public var used: Int
    public var createdBy: String
    public var createdAt: Date

    public init(batchId: UUID, count: Int, used: Int, createdBy: String, createdAt: Date) {
        self.batchId = batchId
        self.count = count
        self.used = used
        self.createdBy = createdBy
        self.createdAt = createdAt
    }
}

/// `GET /admin/v1/studies/{studyId}/token-batches`.
public struct TokenBatchList: Codable, Sendable, Equatable {
    public var batches: [TokenBatch]

    public init(batches: [TokenBatch]) { self.batches = batches }
}

/// `POST /admin/v1/studies/{studyId}/token-batches`: the body `{"count"}` and the reply.
public struct TokenBatchCreated: Codable, Sendable, Equatable {
    public var batchId: UUID
    public var count: Int

    public init(batchId: UUID, count: Int) {
        self.batchId = batchId
        self.count = count
    }
}
