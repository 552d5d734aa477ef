import Foundation
import JSONText

/// The parts of a study document other than its activities, read from the replies the apps are
/// served: the listing, `studyInfo`, `eligibilityConsent`, `consentDocument`, `resources`,
/// `participantProperties` and `studyDashboard`. Each is the inverse of how StudyStack serves the
/// part (docs/moving-in.md); what does not map is reported where it was read.
struct MyStudiesStudyContent {
    let study: MyStudiesStudyExport.Study
    let times: WireInstants
    let studyId: String
    private(set) var findings: [MoveInFinding] = []

    init(study: MyStudiesStudyExport.Study, zone: TimeZone) {
        self.study = study
        times = WireInstants(zone: zone)
        studyId = study.studyId
    }

    mutating func found(_ at: String, _ effect: MoveInFinding.Effect, _ message: String) {
        findings.append(MoveInFinding(studyId: studyId, at: at, effect: effect, message: message))
    }

    /// The study document without its activities.
    mutating func document(appId: String, timeZone: String) -> StudyDocument {
        let listing = study.listing
        var document = StudyDocument(
            studyId: studyId, appId: appId, name: .plain(Lenient.text(listing["title"]) ?? studyId))
        document.timeZone = timeZone
        document.category = Lenient.text(listing["category"]).map(LocalizedText.plain)
        document.sponsor = Lenient.text(listing["sponsorName"]).map(LocalizedText.plain)
        document.tagline = Lenient.text(listing["tagline"]).map(LocalizedText.plain)
        document.logo = Lenient.text(listing["logo"])
        document.versionLabel = Lenient.text(listing["studyVersion"])
        let settings = listing["settings"]
        document.enrolling = Lenient.flag(settings?["enrolling"]) ?? true
        document.rejoin = Rejoin(allowed: Lenient.flag(settings?["rejoin"]) ?? true)
        switch Lenient.text(settings?["platform"])?.lowercased() {
        case "ios": document.platforms = [.ios]
        case "android": document.platforms = [.android]
        default: document.platforms = [.ios, .android]
        }
        if let language = Lenient.text(listing["studyLanguage"]), language != "en" {
            found("studyList#/studyLanguage", .note, "the study is in \"\(language)\" at the source; its texts are imported as the study's English texts")
        }
        readInfo(into: &document)
        readEligibility(into: &document)
        readConsent(into: &document)
        readResources(into: &document)
        readProperties(into: &document)
        return document
    }

    // MARK: - studyInfo

    private mutating func readInfo(into document: inout StudyDocument) {
        guard let info = study.studyInfo else {
            found("studyInfo", .notImported, "the source did not serve studyInfo: the overview and withdrawal settings are the defaults")
            return
        }
        document.website = Lenient.text(info["studyWebsite"])
        document.overview = Lenient.items(info["info"]).enumerated().map { index, page in
            let video = Lenient.text(page["type"]) == "video" ? Lenient.text(page["videoLink"]) : nil
            if video != nil, index > 0 {
                found("studyInfo#/info/\(index)/videoLink", .changed, "only the first overview page may have a video here; this page's is left out")
            }
            return OverviewPage(
                title: .plain(Lenient.text(page["title"]) ?? ""), text: .plain(Lenient.text(page["text"]) ?? ""),
                image: Lenient.text(page["image"]), videoUrl: index == 0 ? video : nil)
        }
        let withdrawal = info["withdrawalConfig"]
        if let type = Lenient.text(withdrawal?["type"]) {
            if let kind = Withdrawal.Kind(rawValue: type) {
                document.withdrawal = Withdrawal(type: kind, message: Lenient.text(withdrawal?["message"]).map(LocalizedText.plain))
            } else {
                found("studyInfo#/withdrawalConfig/type", .changed, "\"\(type)\" is not a withdrawal setting the apps know; the study keeps the data (no_action)")
            }
        }
        if let type = Lenient.text(info["anchorDate"]?["type"]) {
            found("studyInfo#/anchorDate", .note, "the study-wide anchor date (\(type)) is read from each activity's own anchor here")
        }
    }

    // MARK: - eligibilityConsent

    private mutating func readEligibility(into document: inout StudyDocument) {
        guard let eligibility = study.eligibilityConsent?["eligibility"] else {
            found("eligibilityConsent", .notImported, "the source did not serve eligibilityConsent: eligibility is by enrollment token")
            return
        }
        let typeName = Lenient.text(eligibility["type"]) ?? "token"
        guard let type = Eligibility.Kind(rawValue: typeName) else {
            found("eligibilityConsent#/eligibility/type", .changed, "\"\(typeName)\" is not an eligibility the apps know; eligibility is by enrollment token")
            return
        }
        var answers: [String: Bool] = [:]
        for answer in Lenient.items(eligibility["correctAnswers"]) {
            if let key = Lenient.text(answer["key"]), let passing = Lenient.flag(answer["answer"]) { answers[key] = passing }
        }
        var questions: [EligibilityQuestion] = []
        for (index, step) in Lenient.items(eligibility["test"]).enumerated() {
            let at = "eligibilityConsent#/eligibility/test/\(index)"
            guard let key = Lenient.text(step["key"]) else {
                found(at, .notImported, "a test question needs a key")
                continue
            }
            let resultType = Lenient.text(step["resultType"]) ?? "boolean"
            guard resultType == ResponseType.boolean.rawValue else {
                found(at, .notImported, "only yes/no questions decide eligibility here; \"\(key)\" is a \(resultType) question")
                continue
            }
            guard let passing = answers[key] else {
                found(at, .notImported, "\"\(key)\" has no answer that qualifies in correctAnswers")
                continue
            }
            questions.append(EligibilityQuestion(key: key, text: .plain(Self.question(step, key: key)), passingAnswer: passing))
        }
        document.eligibility = Eligibility(
            type: type, tokenTitle: Lenient.text(eligibility["tokenTitle"]).map(LocalizedText.plain), questions: questions)
        if type != .token, questions.isEmpty {
            found("eligibilityConsent#/eligibility/test", .changed, "a \(type.rawValue) eligibility with no question that could be read is imported as by enrollment token")
            document.eligibility.type = .token
        }
    }

    private mutating func readConsent(into document: inout StudyDocument) {
        guard let consent = study.eligibilityConsent?["consent"] else { return }
        var result = Consent()
        result.versionLabel = Lenient.text(consent["version"])
        for (index, screen) in Lenient.items(consent["visualScreens"]).enumerated() {
            let typeName = Lenient.text(screen["type"]) ?? "custom"
            let kind = ConsentScreen.Kind(rawValue: typeName) ?? .custom
            if ConsentScreen.Kind(rawValue: typeName) == nil {
                found("eligibilityConsent#/consent/visualScreens/\(index)/type", .changed, "\"\(typeName)\" is imported as a custom section")
            }
            result.visualScreens.append(ConsentScreen(
                type: kind, title: .plain(Lenient.text(screen["title"]) ?? ""), text: .plain(Lenient.text(screen["text"]) ?? ""),
                description: Lenient.text(screen["description"]).map(LocalizedText.plain),
                html: Lenient.text(screen["html"]).map(LocalizedText.plain), url: Lenient.text(screen["url"]),
                visualStep: Lenient.flag(screen["visualStep"]) ?? true))
        }
        result.comprehension = comprehension(consent["comprehension"])
        let sharing = consent["sharing"]
        if let title = Lenient.text(sharing?["title"]) {
            result.sharing = SharingScreen(
                title: .plain(title), text: .plain(Lenient.text(sharing?["text"]) ?? ""),
                shortDesc: .plain(Lenient.text(sharing?["shortDesc"]) ?? ""),
                longDesc: .plain(Lenient.text(sharing?["longDesc"]) ?? ""),
                learnMore: Lenient.text(sharing?["learnMore"]).map(LocalizedText.plain),
                allowWithoutSharing: Lenient.flag(sharing?["allowWithoutSharing"]) ?? true)
        }
        let review = consent["review"]
        // What participants signed is kept as it was served, so the same document is signed here.
        let signed = Lenient.text(review?["reviewHTML"]) ?? Lenient.text(study.consentDocument?["consent"]?["content"])
        if let served = Lenient.text(study.consentDocument?["consent"]?["content"]),
            let html = Lenient.text(review?["reviewHTML"]), !served.unicodeScalars.elementsEqual(html.unicodeScalars)
        {
            found("consentDocument#/consent/content", .note, "the consent document differs from the review's reviewHTML; participants sign the reviewHTML here")
        }
        result.review = ConsentReview(
            type: signed == nil ? .sections : .html, html: signed.map(LocalizedText.plain),
            title: Lenient.text(review?["title"]).map(LocalizedText.plain),
            signatureTitle: Lenient.text(review?["signatureTitle"]).map(LocalizedText.plain),
            reasonForConsent: Lenient.text(review?["reasonForConsent"]).map(LocalizedText.plain),
            consentByLAR: Lenient.flag(review?["consentByLAR"]) ?? false,
            additionalSignature: Lenient.flag(review?["additionalSignature"]) ?? false,
            signatures: Lenient.items(review?["signatures"]).compactMap(Lenient.text).map(LocalizedText.plain))
        document.consent = result
    }

    private mutating func comprehension(_ value: JSONValue?) -> Comprehension? {
        let steps = Lenient.items(value?["questions"])
        guard !steps.isEmpty else { return nil }
        var correct: [String: (answers: [String], evaluation: ComprehensionQuestion.Evaluation?)] = [:]
        for answer in Lenient.items(value?["correctAnswers"]) {
            guard let key = Lenient.text(answer["key"]) else { continue }
            let answers = Lenient.items(answer["answer"]).compactMap(Lenient.text)
            correct[key] = (answers, Lenient.text(answer["evaluation"]).flatMap(ComprehensionQuestion.Evaluation.init(rawValue:)))
        }
        var questions: [ComprehensionQuestion] = []
        for (index, value) in steps.enumerated() {
            let at = "eligibilityConsent#/consent/comprehension/questions/\(index)"
            // The format alone: the originals wrote the step's type as `Question` as often as `question`.
            guard let key = Lenient.text(value["key"]), let format = value["format"].flatMap({ Lenient.decode(ChoiceFormat.self, from: $0) }),
                let choices = format.textChoices, !choices.isEmpty
            else {
                found(at, .notImported, "a comprehension question is a text-choice question with a key here")
                continue
            }
            guard let answer = correct[key] else {
                found(at, .notImported, "\"\(key)\" has no correct answer in correctAnswers")
                continue
            }
            questions.append(ComprehensionQuestion(
                key: key, text: .plain(Self.question(value, key: key)), choices: choices, selectionStyle: format.selectionStyle,
                correctAnswers: answer.answers, evaluation: answer.evaluation))
        }
        guard !questions.isEmpty else { return nil }
        let passScore = Lenient.integer(value?["passScore"], in: 0...questions.count) ?? questions.count
        return Comprehension(passScore: passScore, questions: questions)
    }

    /// The words of an eligibility or comprehension question: the step's title where the server
    /// put them there (MyStudies 2.x, and StudyStack), its text where the title only repeats the
    /// key or is empty (the LabKey-era replies).
    static func question(_ step: JSONValue, key: String) -> String {
        if let title = Lenient.text(step["title"]), !title.unicodeScalars.elementsEqual(key.unicodeScalars) { return title }
        return Lenient.text(step["text"]) ?? key
    }

    // MARK: - resources

    private mutating func readResources(into document: inout StudyDocument) {
        for (index, resource) in Lenient.items(study.resources?["resources"]).enumerated() {
            let at = "resources#/resources/\(index)"
            guard let id = Lenient.text(resource["resourcesId"]) else {
                found(at, .notImported, "a resource needs its resourcesId")
                continue
            }
            let kind: StudyResource.Kind = Lenient.text(resource["type"]) == "pdf" ? .pdf : .html
            var imported = StudyResource(
                resourceId: id, title: .plain(Lenient.text(resource["title"]) ?? id), type: kind,
                content: .plain(Lenient.text(resource["content"]) ?? ""),
                notificationText: Lenient.text(resource["notificationText"]).map(LocalizedText.plain))
            if Lenient.text(resource["audience"]) == "Limited", let window = resource["availability"] {
                imported.availability = availability(window, at: at + "/availability")
            }
            document.resources.append(imported)
        }
    }

    private mutating func availability(_ window: JSONValue, at: String) -> ResourceAvailability? {
        if Lenient.text(window["availabilityType"]) == "AnchorDate" {
            let source = Lenient.text(window["sourceType"]) ?? ""
            let anchor: Anchor
            switch source {
            case "EnrollmentDate": anchor = Anchor(source: .enrollmentDate)
            case "ActivityResponse":
                anchor = Anchor(
                    source: .activityResponse, activityId: Lenient.text(window["sourceActivityId"]),
                    key: Lenient.text(window["sourceKey"]), formKey: Lenient.text(window["sourceFormKey"]))
            case "ParticipantProperty": anchor = Anchor(source: .participantProperty, propertyKey: Lenient.text(window["sourceKey"]))
            default:
                found(at + "/sourceType", .changed, "\"\(source)\" is not an anchor the apps know; the resource is always available")
                return nil
            }
            let days = DocumentBounds.anchorDays
            return ResourceAvailability(
                anchor: anchor, startDays: Lenient.integer(window["startDays"], in: days),
                endDays: Lenient.integer(window["endDays"], in: days),
                time: Lenient.text(window["startTime"]).flatMap(LocalTimes.time).map(WireInstants.clock))
        }
        let start = times.local(Lenient.text(window["availableDate"]))
        let end = times.local(Lenient.text(window["expiryDate"]))
        return ResourceAvailability(startDate: start?.date, endDate: end?.date, time: start?.time)
    }

    // MARK: - participantProperties

    private mutating func readProperties(into document: inout StudyDocument) {
        for (index, property) in Lenient.items(study.participantProperties?["participantProperties"]).enumerated() {
            let at = "participantProperties#/participantProperties/\(index)"
            guard let key = Lenient.text(property["propertyId"]) else {
                found(at, .notImported, "a participant property needs its propertyId")
                continue
            }
            let typeName = Lenient.text(property["propertyDataType"]) ?? "string"
            let dataType: ParticipantProperty.DataType = typeName == "decimal" ? .number : ParticipantProperty.DataType(rawValue: typeName) ?? .string
            if typeName != "decimal", ParticipantProperty.DataType(rawValue: typeName) == nil {
                found(at + "/propertyDataType", .changed, "\"\(typeName)\" is imported as text")
            }
            document.participantProperties.append(ParticipantProperty(
                key: key, name: Lenient.text(property["propertyName"]).map(LocalizedText.plain),
                timing: Lenient.text(property["propertyType"]) == "postenrollment" ? .postEnrollment : .preEnrollment,
                dataType: dataType, dataSource: Lenient.text(property["dataSource"]),
                refresh: Lenient.flag(property["shouldRefresh"])))
        }
    }
}
