import ConsoleCore
import ConsoleHTTP
import Foundation
import JSONText
import StudyModels
import Testing

/// The builder's real controls: dates and times in the browser's own inputs, weekdays and the
/// study's own steps, activities and properties chosen from lists, correct answers ticked on
/// their choices, and an anchor that shows and keeps only the fields of the date chosen.
@Suite struct FormControlTests {
    static func draft() throws -> JSONValue { try StudySectionTests.example() }

    /// The fields of `section` as the page draws them, by input id.
    static func fields(_ section: StudySection, values: FormFields, draft: JSONValue) -> [String: FieldView] {
        var found: [String: FieldView] = [:]
        func visit(_ elements: [ElementView]) {
            for element in elements {
                for field in element.field { found[field.id] = field }
                for list in element.list { for row in list.rows { visit(row.elements) } }
                for group in element.group { visit(group.elements) }
                for variant in element.variant { visit(variant.elements) }
            }
        }
        visit(section.views(values: values, problems: [], spanish: false, readOnly: false, draft: draft))
        return found
    }

    static func index(of activityId: String, in draft: JSONValue) throws -> Int {
        try #require(draft["activities"]?.array?.firstIndex { $0["activityId"]?.string == activityId })
    }

    /// A resource of the PDF kind is an address per language that suggests the study's uploaded
    /// PDFs; a text resource is a text area, which suggests nothing.
    @Test func aPDFResourceSuggestsTheStudysPDFsAndATextOneIsATextArea() throws {
        let draft = try JSONValue.parse(Array(#"""
            {"resources": [{"resourceId": "r1", "type": "pdf", "content": {"en": "https://files.example/a.pdf"}},
                           {"resourceId": "r2", "type": "html", "content": {"en": "<p>Hello</p>"}}]}
            """#.utf8), budget: .studyDocument)
        let section = StudySection.resources
        let values = section.values(in: draft)
        let html = FormHTML.render(section.views(values: values, problems: [], spanish: false, readOnly: false), studyId: "S").renderText
        #expect(html.contains(#"name="/resources/0/content/en" value="https://files.example/a.pdf" list="study-pdfs""#), "\(html)")
        #expect(html.contains(#"<textarea id="f-resources-1-content-en""#))
        #expect(!html.contains(#"name="/resources/1/content/en" value"#))
        let kinds = section.elements.reduce(into: Set<FormField.Uploads>()) { $0.formUnion($1.suggestedUploads(in: values, at: section.root)) }
        #expect(kinds == [.pdfs])
        // Saving the page untouched changes nothing.
        #expect(try section.applying(values, to: draft) == draft)
    }

    @Test func datesAndTimesUseTheBrowsersInputsOnlyForValuesInTheirExactForm() {
        #expect(FieldView.browserInputType(.date, for: "") == "date")
        #expect(FieldView.browserInputType(.date, for: "2027-01-04") == "date")
        // A date input shows nothing for a day that does not exist, and would send nothing back.
        #expect(FieldView.browserInputType(.date, for: "2027-02-30") == "text")
        #expect(FieldView.browserInputType(.date, for: "4 January") == "text")
        #expect(FieldView.browserInputType(.time, for: "08:00") == "time")
        #expect(FieldView.browserInputType(.time, for: "08:00:30") == "text")
        #expect(FieldView.browserInputType(.time, for: "25:00") == "text")
        #expect(FieldView.browserInputType(.dateTime, for: "2027-01-04T09:30") == "datetime-local")
        #expect(FieldView.browserInputType(.dateTime, for: "2027-01-04T09:30:00+01:00") == "text")
        // Text from outside compared by scalars: a combining mark does not pass for a digit.
        #expect(FieldView.browserInputType(.time, for: "08:0\u{0301}0") == "text")
    }

    /// A date question's earliest, latest and starting dates are date-and-time inputs on the
    /// study's clock (New York in the example), written as the apps read them, with the study's
    /// offset at that instant (DST-correct); what the page showed untouched keeps its spelling.
    @Test func aDateQuestionsDatesAreDateAndTimeControlsOnTheStudysClock() throws {
        var draft = try Self.draft()
        let baseline = try Self.index(of: "baseline", in: draft)
        let format = JSONPointer("/activities/\(baseline)/steps/0/format")!
        // Saved with another offset (a design moved in from elsewhere): the same instant.
        try draft.set(.string("2027-01-04T14:00:00.000+0000"), at: format.appending("minDate"))
        let page = StudySection.step(index: baseline, activityId: "baseline", stepIndex: 0, key: "diagnosisDate")
        let values = page.values(in: draft)
        let html = FormHTML.render(
            page.views(values: values, problems: [], spanish: false, readOnly: false, draft: draft), studyId: "S1",
            timeZone: "America/New_York").renderText
        let prefix = "f-activities-\(baseline)-steps-0-format-"
        #expect(html.contains(#"type="datetime-local" id="\#(prefix)minDate" name="/activities/\#(baseline)/steps/0/format/minDate" value="2027-01-04T09:00""#), "\(html)")
        #expect(html.contains(#"type="datetime-local" id="\#(prefix)maxDate""#))
        #expect(html.contains(#"id="\#(prefix)minDate-zone">America/New_York time, the study&#39;s time zone."#), "\(html)")
        #expect(html.contains(#"<select id="\#(prefix)dateRange""#))
        // Untouched, nothing changes (the member keeps its UTC spelling).
        var form = values
        for (name, value) in [("minDate", "2027-01-04T09:00"), ("maxDate", ""), ("default", "")] {
            form.set("/activities/\(baseline)/steps/0/format/\(name)", value)
        }
        #expect(try page.applying(form, to: draft) == draft)
        // Typed: written with New York's offset on that day, winter and summer.
        form.set("/activities/\(baseline)/steps/0/format/minDate", "2027-01-05T09:00")
        form.set("/activities/\(baseline)/steps/0/format/maxDate", "2027-07-01T18:30")
        form.set("/activities/\(baseline)/steps/0/format/dateRange", "custom")
        let saved = try page.applying(form, to: draft)
        #expect(saved[pointer: format.appending("minDate")] == .string("2027-01-05T09:00:00.000-0500"))
        #expect(saved[pointer: format.appending("maxDate")] == .string("2027-07-01T18:30:00.000-0400"))
        #expect(saved[pointer: format.appending("dateRange")] == .string("custom"))
        let document = try StudySectionTests.study(saved)
        #expect(StudyValidator.validate(document).filter { $0.pointer.hasPrefix(format.description) } == [])
        // Something that is not a date and time is sent as typed, for the admin API to name.
        form.set("/activities/\(baseline)/steps/0/format/maxDate", "next spring")
        let typed = try page.applying(form, to: draft)
        #expect(typed[pointer: format.appending("maxDate")] == .string("next spring"))
        let problems = StudyValidator.validate(try StudySectionTests.study(typed))
        #expect(problems.contains { $0.pointer == format.appending("maxDate").description && $0.message.contains("as the apps read it") }, "\(problems)")
    }

    /// What cannot be shown on the study's clock without losing part of it stays as it is, as text.
    @Test func anAppDateTheInputCannotHoldStaysText() {
        let field = FormField("/minDate", "Earliest", .appDateTime)
        let zone = TimeZone(identifier: "Europe/London")
        func shown(_ value: String, _ zone: TimeZone?) -> FieldView {
            let view = FieldView(field: field, values: FormFields([("/minDate", value)]), problems: [], spanish: false, readOnly: false)
            return view.onStudyClock(zone)
        }
        #expect(shown("2027-07-01T08:00:00.000+0000", zone).value == "2027-07-01T09:00")
        #expect(shown("2027-07-01T08:00:00.000+0000", zone).inputType == "datetime-local")
        #expect(shown("2027-07-01T08:00:30.000+0000", zone).inputType == "text", "seconds the input would drop")
        #expect(shown("2027-07-01T08:00:00.000+0000", nil).value == "2027-07-01T08:00:00.000+0000")
        #expect(shown("yesterday", zone).inputType == "text")
        #expect(shown("", zone).inputType == "datetime-local")
        // Without the study's zone, a wall clock is sent as typed (the admin API names it).
        #expect(field.value(from: FormFields([("/minDate", "2027-07-01T09:00")])) == .string("2027-07-01T09:00"))
        var form = FormFields([("/minDate", "")])
        form.timeZone = zone
        #expect(field.value(from: form, existing: .string("")) == .string(""), "the original servers' empty value is kept")
        #expect(field.value(from: form) == nil)
    }

    @Test func theDailyScheduleIsDrawnWithDateAndTimeInputs() throws {
        let draft = try Self.draft()
        let daily = try Self.index(of: "daily", in: draft)
        let page = StudySection.activity(index: daily, activityId: "daily")
        let fields = Self.fields(page, values: page.values(in: draft), draft: draft)
        #expect(fields["f-activities-\(daily)-schedule-startDate"]?.inputType == "date")
        #expect(fields["f-activities-\(daily)-schedule-startDate"]?.value == "2027-01-04")
        let times = try #require(fields["f-activities-\(daily)-schedule-dailyTimes"])
        #expect(times.isTimes && times.times == ["08:00", "20:00"])
        let html = FormHTML.render(page.views(values: page.values(in: draft), problems: [], spanish: false, readOnly: false, draft: draft), studyId: "S1").renderText
        #expect(html.contains("type=\"date\" id=\"f-activities-\(daily)-schedule-startDate\""))
        // Two times and two empty inputs to add more, each named for the member.
        #expect(html.components(separatedBy: "type=\"time\" aria-label=\"Times: time").count - 1 == 4)
    }

    @Test func timesAreWrittenInOrderWithoutTheEmptyInputs() throws {
        let field = FormField("/dailyTimes", "Times", .times)
        let form = FormFields([("/dailyTimes", "07:30"), ("/dailyTimes", ""), ("/dailyTimes", " 21:00 "), ("/dailyTimes", "")])
        #expect(field.value(from: form) == .array([.string("07:30"), .string("21:00")]))
        // None given: the member is left out, not written as an empty list.
        #expect(field.value(from: FormFields([("/dailyTimes", ""), ("/dailyTimes", "")])) == nil)
        var item = JSONValue.object(["dailyTimes": .array([.string("08:00")])])
        try field.apply(form, at: JSONPointer(tokens: []), to: &item)
        #expect(item["dailyTimes"] == .array([.string("07:30"), .string("21:00")]))
    }

    @Test func aWeekdayIsChosenByNameAndWrittenAsItsNumber() throws {
        let draft = try Self.draft()
        let weekly = try Self.index(of: "weekly", in: draft)
        let page = StudySection.activity(index: weekly, activityId: "weekly")
        let values = page.values(in: draft)
        let weekday = try #require(Self.fields(page, values: values, draft: draft)["f-activities-\(weekly)-schedule-dayOfWeek"])
        #expect(weekday.isChoice)
        #expect(weekday.options.count == 7)
        #expect(weekday.options.first { $0.selected } == nil, "the example gives none")
        #expect(weekday.options.first?.label == "Sunday")
        var form = values
        form.set("/activities/\(weekly)/schedule/dayOfWeek", "6")
        let saved = try page.applying(form, to: draft)
        #expect(saved[pointer: JSONPointer("/activities/\(weekly)/schedule/dayOfWeek")!] == .number(6))
    }

    @Test func aBranchLeadsToAStepOfItsOwnActivityChosenFromTheList() throws {
        let draft = try Self.draft()
        let daily = try Self.index(of: "daily", in: draft)
        let steps = try #require(draft["activities"]?.array?[daily]["steps"]?.array)
        let caffeine = try #require(steps.firstIndex { $0["key"]?.string == "caffeine" })
        let page = StudySection.step(index: daily, activityId: "daily", stepIndex: caffeine, key: "caffeine")
        let fields = Self.fields(page, values: page.values(in: draft), draft: draft)
        let target = try #require(fields["f-activities-\(daily)-steps-\(caffeine)-destinations-0-destination"])
        #expect(target.isChoice && target.emptyLabel == "The end of the activity")
        let keys = target.options.map(\.value)
        #expect(keys.count == steps.count - 1, "every step but the step itself")
        #expect(!keys.contains("caffeine"))
        #expect(target.options.first { $0.selected }?.value == "caffeineCups")
        #expect(target.options.first { $0.value == "caffeineCups" }?.label == "caffeineCups: How many cups?")
        // A target that is no step (renamed since) stays shown and chosen, so saving keeps it
        // and the check names it.
        var document = draft
        try document.set(.string("gone"), at: JSONPointer("/activities/\(daily)/steps/\(caffeine)/destinations/0/destination")!)
        let stale = Self.fields(page, values: page.values(in: document), draft: document)["f-activities-\(daily)-steps-\(caffeine)-destinations-0-destination"]
        #expect(stale?.options.first?.value == "gone" && stale?.options.first?.selected == true)
        #expect(try page.applying(page.values(in: document), to: document) == document)
    }

    @Test func anAnchorShowsAndKeepsOnlyTheFieldsOfTheDateChosen() throws {
        let draft = try Self.draft()
        let followUp = try Self.index(of: "followUp", in: draft)
        let page = StudySection.activity(index: followUp, activityId: "followUp")
        let values = page.values(in: draft)
        let base = "/activities/\(followUp)/schedule/anchor"
        let fields = Self.fields(page, values: values, draft: draft)
        let activity = try #require(fields[FieldView.elementID(JSONPointer(base + "/activityId")!)])
        #expect(activity.options.map(\.value).count == draft["activities"]?.array?.count)
        #expect(activity.options.first { $0.selected }?.value == "baseline")
        #expect(fields[FieldView.elementID(JSONPointer(base + "/propertyKey")!)] == nil, "a property's field is not shown for an answer")

        // Switched to a property: the answer's activity and key go; the property is chosen from
        // the date properties marked as anchors.
        var form = FormVariant.refreshed(values, variant: base + "/source")
        form.set(base + "/source", "participantProperty")
        form = FormVariant.refreshed(form, variant: base + "/source")
        let shown = Self.fields(page, values: form, draft: draft)
        let property = try #require(shown[FieldView.elementID(JSONPointer(base + "/propertyKey")!)])
        #expect(property.options.map(\.value) == ["surgeryDate"])
        #expect(shown[FieldView.elementID(JSONPointer(base + "/activityId")!)] == nil)
        form.set(base + "/propertyKey", "surgeryDate")
        let saved = try page.applying(form, to: draft)
        #expect(saved[pointer: JSONPointer(base)!] == .object(["source": .string("participantProperty"), "propertyKey": .string("surgeryDate")]))

        // A source no list offers (only a crafted form sends one) clears nothing: the admin API
        // names the value, and the answer's fields are still there to fix it with.
        var crafted = values
        crafted.set(base + "/source", "somethingElse")
        let kept = try page.applying(crafted, to: draft)
        #expect(kept[pointer: JSONPointer(base + "/activityId")!] == .string("baseline"))
        #expect(kept[pointer: JSONPointer(base + "/source")!] == .string("somethingElse"))
    }

    @Test func aNotificationShowsOnlyTheFieldsOfWhenItIsSent() throws {
        let draft = try Self.draft()
        let page = StudySection.notifications
        var form = page.values(in: draft)
        let fields = Self.fields(page, values: form, draft: draft)
        // welcome: when published; midpoint: at a time; weeklyReminder: days after enrollment.
        #expect(fields["f-notifications-0-at"] == nil && fields["f-notifications-0-time"] == nil)
        #expect(fields["f-notifications-1-at"]?.inputType == "datetime-local")
        #expect(fields["f-notifications-1-at"]?.value == "2027-02-15T09:00")
        #expect(fields["f-notifications-2-time"]?.inputType == "time")
        #expect(fields["f-notifications-2-at"] == nil)
        #expect(fields["f-notifications-2-activityId"]?.options.first { $0.selected }?.value == "weekly")
        // The reminder sent at a time instead: its anchor, days and time go.
        form.set("/notifications/2/timing", "scheduled")
        form = FormVariant.refreshed(form, variant: "/notifications/2/timing")
        #expect(Self.fields(page, values: form, draft: draft)["f-notifications-2-at"]?.inputType == "datetime-local")
        form.set("/notifications/2/at", "2027-03-01T09:00")
        let saved = try page.applying(form, to: draft)
        let notification = try #require(saved["notifications"]?.array?.last)
        #expect(notification["timing"] == .string("scheduled") && notification["at"] == .string("2027-03-01T09:00"))
        #expect(notification["anchor"] == nil && notification["anchorDays"] == nil && notification["time"] == nil)
        #expect(notification["activityId"] == .string("weekly"))
    }

    @Test func correctAnswersAreTheChoicesTicked() throws {
        let draft = try Self.draft()
        let page = StudySection.consent
        let values = page.values(in: draft)
        let question = "/consent/comprehension/questions/0"
        #expect(values[question + "/choices/0#mark"] == "true")
        #expect(values[question + "/choices/1#mark"] == nil)
        let html = FormHTML.render(page.views(values: values, problems: [], spanish: false, readOnly: false, draft: draft), studyId: "S1").renderText
        #expect(html.contains("id=\"f-consent-comprehension-questions-0-choices-0-mark\" name=\"\(question)/choices/0#mark\" value=\"true\" checked"))

        // Both ticked, the first choice's value renamed: the answers follow the rows.
        var form = values
        form.set(question + "/choices/1#mark", "true")
        form.set(question + "/choices/0/value", "y")
        var saved = try page.applying(form, to: draft)
        #expect(saved[pointer: JSONPointer(question + "/correctAnswers")!] == .array([.string("y"), .string("no")]))

        // The rows moved before saving: each tick moves with its row.
        form = try #require(FormEdit("down \(question)/choices/0")?.applied(to: values))
        saved = try page.applying(form, to: draft)
        #expect(saved[pointer: JSONPointer(question + "/choices/1/value")!] == .string("yes"))
        #expect(saved[pointer: JSONPointer(question + "/correctAnswers")!] == .array([.string("yes")]))

        // None ticked: no correct answer, which the admin API names.
        form = values
        form = FormFields(form.pairs.filter { !$0.name.hasSuffix("#mark") })
        saved = try page.applying(form, to: draft)
        #expect(saved[pointer: JSONPointer(question + "/correctAnswers")!] == .array([]))
    }
}

/// "Add" works on the page: each list that can grow carries its new row in a `<template>`, with
/// a placeholder of its own nesting level where the row's index goes.
@Suite struct NewRowTemplateTests {
    @Test func eachListThatCanGrowCarriesItsNewRowWithAPlaceholderOfItsOwnLevel() throws {
        let draft = try StudySectionTests.example()
        let page = StudySection.consent
        let html = FormHTML.render(page.views(values: page.values(in: draft), problems: [], spanish: false, readOnly: false, draft: draft), studyId: "S1")
            .renderText
        // A new question (level 3: /consent/comprehension/questions) and, inside it and inside
        // the saved question, a new choice (level 5: /consent/comprehension/questions/<n>/choices).
        #expect(html.contains(#"<template class="new-row" data-op="add /consent/comprehension/questions" data-token="__ROW3__""#))
        #expect(html.contains(#"name="/consent/comprehension/questions/__ROW3__/key""#))
        #expect(html.contains(#"data-op="add /consent/comprehension/questions/__ROW3__/choices" data-token="__ROW5__""#))
        #expect(html.contains(#"data-op="add /consent/comprehension/questions/0/choices" data-token="__ROW5__""#))
        #expect(html.contains(#"name="/consent/comprehension/questions/__ROW3__/choices/__ROW5__#mark""#))
        #expect(html.contains("Question __NUMBER3__"))
        // The new row is whole: a #from that says it is new, and the item's fields empty.
        #expect(html.contains(#"name="/consent/comprehension/questions/__ROW3__#from" value>"#))

        // A viewer's page has none, and a full list neither.
        let read = FormHTML.render(page.views(values: page.values(in: draft), problems: [], spanish: false, readOnly: true, draft: draft), studyId: "S1")
            .renderText
        #expect(!read.contains("<template"))
        var full = page.values(in: draft)
        full.set("/consent/visualScreens#count", String(FormList.maxRows))
        let fullHTML = FormHTML.render(page.views(values: full, problems: [], spanish: false, readOnly: false, draft: draft), studyId: "S1").renderText
        #expect(!fullHTML.contains(#"data-op="add /consent/visualScreens""#))
    }
}
