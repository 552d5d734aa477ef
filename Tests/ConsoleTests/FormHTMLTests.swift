import ConsoleCore
import ConsoleHTTP
import HTTPTypes
import JSONText
import Logging
import StudyModels
import Testing

/// The form elements are written by Swift, not by a template: every value in them is escaped, and
/// no template may draw anything else unescaped.
@Suite struct FormHTMLTests {
    static let hostile = #"x"><script>alert('1')</script>&"#
    static let escaped = "x&quot;&gt;&lt;script&gt;alert(&#39;1&#39;)&lt;/script&gt;&amp;"

    /// Every time says whose clock it is read on: the study's zone by name, each participant's
    /// own, or the study's unless the schedule counts from a participant's date.
    @Test func everyTimeSaysItsZone() {
        let section = StudySection(
            slug: "test", title: "Test", intro: "",
            elements: [
                .field(FormField("/at", "At", .time)), .field(FormField("/from", "From", .dateTime)),
                .field(FormField("/quiet", "Quiet from", .time).inZone(.participant)),
                .field(FormField("/opens", "Opens", .time).inZone(.studyUnlessAnchored)),
                .field(FormField("/title", "Title")),
            ])
        let html = FormHTML.render(
            section.views(values: FormFields(), problems: [], spanish: false, readOnly: false), studyId: "S", timeZone: "Europe/Madrid"
        ).renderText
        #expect(html.components(separatedBy: "Europe/Madrid time, the study&#39;s time zone.").count - 1 == 2)
        #expect(html.contains(#"id="f-quiet-zone">Each participant&#39;s own time (their phone&#39;s time zone).</p>"#))
        #expect(html.contains("Europe/Madrid time, the study&#39;s time zone; counted from a participant&#39;s date, their own time."))
        #expect(html.components(separatedBy: "class=\"help zone\"").count - 1 == 4, "the title is no time")
    }

    @Test func everyValueLabelAndProblemIsEscaped() {
        let section = StudySection(
            slug: "test", title: "Test", intro: "",
            elements: [
                .field(FormField("/title", Self.hostile, .localized(long: false), help: Self.hostile)),
                .field(FormField("/kind", "Kind", .choice([.init(Self.hostile, Self.hostile)]))),
                .list(FormList("/rows", Self.hostile, item: "Row", rowPage: .init(path: "rows", member: "/id", what: Self.hostile), [
                    .field(FormField("/id", "Id")),
                ])),
            ])
        var values = FormFields()
        values.append("/title/en", Self.hostile)
        values.append("/title/es", Self.hostile)
        values.append("/kind", Self.hostile)
        values.append("/rows#count", "1")
        values.append("/rows/0#from", "0")
        values.append("/rows/0/id", Self.hostile)
        for readOnly in [false, true] {
            let html = FormHTML.render(
                section.views(values: values, problems: [.init(pointer: "/title", message: Self.hostile)], spanish: true, readOnly: readOnly),
                studyId: #"S"1"#
            ).renderText
            #expect(!html.contains("<script>"), "read-only: \(readOnly)")
            #expect(!html.contains("'1'"), "read-only: \(readOnly)")
            // label, help, problem, both values: each escaped where it is drawn
            #expect(html.components(separatedBy: Self.escaped).count - 1 >= (readOnly ? 5 : 7), "read-only: \(readOnly)")
        }
        let editable = FormHTML.render(section.views(values: values, problems: [], spanish: true, readOnly: false), studyId: #"S"1"#).renderText
        #expect(editable.contains(#"value="\#(Self.escaped)""#))
        // The row's page link: the study id is a path segment, the row's id escaped for the URL.
        #expect(editable.contains(#"href="/studies/S%221/rows/x%22%3E%3Cscript%3Ealert(&#39;1&#39;)%3C%2Fscript%3E&amp;""#))
    }

    @Test func onlyTheFormMayBeDrawnUnescaped() throws {
        #expect(PageRenderer.unescapedTags(in: "<p>{{name}}</p>{{{form}}}").isEmpty)
        #expect(PageRenderer.unescapedTags(in: "<p>{{{name}}}</p>") == ["{{{name}}}"])
        #expect(PageRenderer.unescapedTags(in: "<p>{{& name}}</p>") == ["{{& name}}"])
        #expect(PageRenderer.unescapedTags(in: "{{{form}}}{{{other}}}") == ["{{{other}}}"])
        // The console's own templates load, so they pass the rule.
        _ = try PageRenderer(logger: Logger(label: "test"), failOnUnknownNames: true)
    }

    /// A quote followed by a combining mark is one `Character` that is not a quote: Mustache's own
    /// escaping wrote it as it was, ending the attribute. Every value is escaped scalar by scalar.
    @Test func aQuoteFollowedByACombiningMarkCannotLeaveAnAttribute() throws {
        let renderer = try PageRenderer(logger: Logger(label: "test"), failOnUnknownNames: true)
        let attack = "x\"\u{301} autofocus onfocus=alert(1) x=\"\u{301}"
        let page = Page(
            layout: PageLayout(title: "Sign in", user: nil, csrf: "token"), body: SignInView(next: "/", email: attack, message: nil, notice: nil))
        let (html, unknown) = renderer.html(page)
        #expect(unknown.isEmpty)
        let start = try #require(html.range(of: "name=\"email\" value=\""))
        // The attribute's value runs to the next quote scalar: all of the attack, escaped.
        let value = String(String.UnicodeScalarView(html[start.upperBound...].unicodeScalars.prefix { $0 != "\"" }))
        let escaped = HTMLText.escape(attack)
        #expect(value == escaped, "\(value)")
    }

    /// A page is a typed view: a name its template asks for that the view does not have is
    /// found, named, and (in the tests' setting) fails the page instead of drawing nothing.
    @Test func aNameTheViewDoesNotHaveFailsThePage() throws {
        struct Misnamed: PageView {
            static let template = "error"
            var heading: String
            var messsage: String
        }
        let renderer = try PageRenderer(logger: Logger(label: "test"), failOnUnknownNames: true)
        let page = Page(layout: PageLayout(title: "Oops", user: nil, csrf: nil), body: Misnamed(heading: "Oops", messsage: "lost"))
        let (html, unknown) = renderer.html(page)
        #expect(unknown == ["message"])
        #expect(!html.contains("lost"))
        let response = renderer.page(page)
        #expect(response.status == .internalServerError)
        // Logged and drawn without it otherwise.
        let lenient = try PageRenderer(logger: Logger(label: "test"), failOnUnknownNames: false)
        #expect(lenient.page(page).status == .ok)
    }

    /// A study or app id goes into a path as one segment: escaped, unless it needs nothing.
    @Test func anIdIsOnePathSegment() {
        #expect(AdminAPIClient.segment("DEMO_study-1") == "DEMO_study-1")
        #expect(AdminAPIClient.segment("UX3 sleep/study?#") == "UX3%20sleep%2Fstudy%3F%23")
        #expect(AdminAPIClient.segment("caf\u{E9}") == "caf%C3%A9")
        #expect(AdminAPIClient.segment("") == "")
    }

    /// After signing in, the browser goes only to a path of the console: never to another host,
    /// however the `next` value hides its second slash.
    @Test func theNextPageAfterSigningInIsAlwaysTheConsoles() {
        #expect(ConsolePages.safeNext("/studies/A/overview?x=1") == "/studies/A/overview?x=1")
        for attack in ["//evil.example", "/\\evil.example", "/\u{301}/evil.example", "//\u{301}evil.example", "/\t/evil.example",
                       "/\n/evil.example", "/\\\u{301}evil.example", "https://evil.example", "evil.example", "/a b", "/\u{1}x", nil] {
            #expect(ConsolePages.safeNext(attack) == "/", "\(attack.map { Array($0.unicodeScalars) } ?? [])")
        }
    }
}
