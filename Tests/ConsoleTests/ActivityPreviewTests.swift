import ConsoleHTTP
import Foundation
import JSONText
import Testing

/// The preview draws what the app draws: a scale's slider where the app puts it, image choices
/// as their images.
@Suite struct ActivityPreviewTests {
    static func step(_ json: String) throws -> JSONValue { try JSONValue.parse(Array(json.utf8), budget: .studyDocument) }

    @Test func aScaleSitsAtItsDefaultOrNowhereUntilMoved() throws {
        let withDefault = ActivityPreview.answer(
            try Self.step(#"{"resultType": "scale", "format": {"minValue": 1, "maxValue": 10, "step": 1, "default": 5}}"#), language: "en")
        // Without a value a range input sits at the middle: 5.5, drawn at 6.
        #expect(withDefault.scale?.value == "5")
        #expect(withDefault.scale?.unset == false)
        let without = ActivityPreview.answer(try Self.step(#"{"resultType": "scale", "format": {"minValue": 1, "maxValue": 10}}"#), language: "en")
        #expect(without.scale?.unset == true)
    }

    @Test func imageChoicesShowTheirImagesWhenTheyAreImages() throws {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
        let step = try Self.step(
            #"{"resultType": "imageChoice", "format": {"imageChoices": ["#
                + #"{"image": "\#(png)", "selectedImage": "\#(png)", "text": "Sunny", "value": "sun"},"#
                + #"{"image": "https://example.org/rain.png", "selectedImage": "", "text": "Rainy", "value": "rain"},"#
                + #"{"image": "aW1n", "selectedImage": "", "text": "Foggy", "value": "fog"}]}}"#)
        let choices = try #require(ActivityPreview.answer(step, language: "en").choiceList?.choices)
        try #require(choices.count == 3)
        #expect(choices[0].image == "data:image/png;base64,\(png)")
        #expect(choices[1].image == "https://example.org/rain.png")
        // Base64 that is no image the apps take: the text alone.
        #expect(choices[2].image == nil)
        #expect(ActivityPreview.imageSource(.string("javascript:alert(1)")) == nil)
        #expect(ActivityPreview.imageSource(.string("iVBORw0KGgo\"><script>")) == nil)
    }
}
