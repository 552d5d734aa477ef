import StudyModels
import Testing

/// A document's HTML read as the blocks a page lays out.
@Suite struct HTMLBlocksTests {
    @Test func headingsParagraphsAndItemsWithEntitiesReadAndScriptsLeftOut() {
        let blocks = HTMLText.blocks(
            "<h2 class='x'>Why &amp; how</h2><p>One\n   two<br>three</p><script>var a = '<p>no</p>';</script><ul><li>a &lt; b</li></ul>"
                + "<p>&#72;&#x69; &bogus; &#0; &#1114112;</p>")
        #expect(blocks == [
            .init(.heading, "Why & how"), .init(.paragraph, "One two"), .init(.paragraph, "three"), .init(.listItem, "a < b"),
            .init(.paragraph, "Hi &bogus; &#0; &#1114112;"),
        ])
    }

    @Test func aTagThatNeverClosesOrAHugeDocumentStopsWithinItsBudget() {
        #expect(HTMLText.blocks("<p>kept</p><p unclosed and the rest") == [.init(.paragraph, "kept")])
        let many = String(repeating: "<p>x</p>", count: 50_000)
        #expect(HTMLText.blocks(many, maxBlocks: 100).count == 100)
        #expect(HTMLText.blocks(String(repeating: "y", count: 10_000), maxScalars: 1_000) == [.init(.paragraph, String(repeating: "y", count: 1_000))])
    }
}
