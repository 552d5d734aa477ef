import ResponseCore
import ServiceKit
import Testing
import TestSupport

/// The response service's own settings: defaults, and a clear refusal of a value out of range.
@Suite struct ResponseSettingsTests {
    func settings(_ values: [String: String]) throws(ConfigurationError) -> ResponseSettings {
        try ResponseSettings(reader: TestConfiguration.reader(for: .response, databaseURL: "postgres://unused/x", overrides: values))
    }

    @Test func processingStoresOneSliceAtATimeUnlessTold() throws {
        #expect(try settings([:]).processingStores == 1)
        #expect(try settings(["processing.stores": "2"]).processingStores == 2)
    }

    @Test func aStoreCountOutOfRangeIsRefusedByName() {
        for value in ["0", "9", "two", "-1"] {
            #expect(throws: ConfigurationError.self, "\(value)") { _ = try settings(["processing.stores": value]) }
            do {
                _ = try settings(["processing.stores": value])
            } catch {
                #expect(error.setting == ResponseSettings.Keys.processingStores, "\(error)")
            }
        }
    }
}
