import Foundation

/// The checks of one activity: its steps, branching, formats and schedule.
struct ActivityChecks {
    /// Active-task results that are numbers, so a dashboard can use them.
    static let numericTaskResults: [TaskType: [String]] = [
        .fetalKickCounter: ["count", "duration"],
        .towerOfHanoi: ["numberOfMoves"],
        .spatialSpanMemory: ["score", "numberOfGames", "numberOfFailures"],
    ]

    let document: StudyDocument
    let activity: StudyActivity
    let pointer: String

    /// Adds what is wrong to `problems`, and to `warnings` what is incomplete but was accepted by
    /// the original servers (their own test designs have questions without choices, empty
    /// activities and instructions inside forms), so such designs still import and publish.
    func run(into problems: inout [ValidationProblem], warnings: inout [ValidationProblem]) {
        var found: [ValidationProblem] = []
        var incomplete: [ValidationProblem] = []
        func problem(_ at: String, _ message: String) { found.append(ValidationProblem(pointer: at, message: message)) }
        func warning(_ at: String, _ message: String) { incomplete.append(ValidationProblem(pointer: at, message: message)) }

        if !Identifiers.isValid(activity.activityId) { problem("\(pointer)/activityId", Identifiers.rule) }
        if let label = activity.versionLabel, !StudyActivity.isValidVersionLabel(label) {
            problem("\(pointer)/versionLabel", StudyActivity.versionLabelRule)
        }
        // (A Sage-only activity has none by design: its assessment is its design.)
        if activity.steps.isEmpty, activity.assessment?.isSageOnly != true { warning("\(pointer)/steps", "the activity has no steps") }

        let tasks = activity.steps.filter { $0.type == .task }
        // A task activity still without its step is incomplete (the warning above), not wrong.
        if activity.kind == .task, !activity.steps.isEmpty, !(tasks.count == 1 && activity.steps.count == 1) {
            problem("\(pointer)/steps", "a task activity has exactly one step, of type task")
        }
        if activity.kind == .questionnaire, !tasks.isEmpty {
            problem("\(pointer)/type", "a questionnaire cannot hold task steps; make it a task activity")
        }

        let stepCount = activity.steps.reduce(0) { $0 + 1 + ($1.steps?.count ?? 0) }
        guard stepCount <= DocumentBounds.maxStepsPerActivity else {
            problem("\(pointer)/steps", "at most \(DocumentBounds.maxStepsPerActivity) steps, a form's questions counted; this has \(stepCount)")
            problems += found
            return
        }
        let topKeys = activity.steps.map(\.key)
        // Built once: every check below is one look-up per step, so the whole is linear in the steps.
        let topKeySet = Set(topKeys.map { ScalarKey($0) })
        duplicates(topKeys, at: "\(pointer)/steps", problem)
        for (index, step) in activity.steps.enumerated() {
            let at = "\(pointer)/steps/\(index)"
            checkStep(step, at: at, problem, warning)
            checkDestinations(step, at: at, stepKeys: topKeySet, problem)
            if let rule = step.visibility, !topKeySet.contains(ScalarKey(rule.source)) || rule.source.unicodeScalars.elementsEqual(step.key.unicodeScalars) {
                problem("\(at)/visibility/source", "\"\(rule.source)\" is not another step of this activity")
            }
            if step.type == .form {
                let children = step.steps ?? []
                if children.isEmpty { warning("\(at)/steps", "the form has no questions") }
                duplicates(children.map(\.key), at: "\(at)/steps", problem)
                for (childIndex, child) in children.enumerated() {
                    let childAt = "\(at)/steps/\(childIndex)"
                    if child.type != .question { warning("\(childAt)/type", "a form should hold questions only") }
                    checkStep(child, at: childAt, problem, warning)
                    if !(child.destinations ?? []).isEmpty {
                        problem("\(childAt)/destinations", "questions inside a form cannot branch; branch from the form")
                    }
                }
            }
        }
        ScheduleChecks(document: document, activity: activity, pointer: "\(pointer)/schedule").run(problem)
        if let reminder = activity.reminder { checkReminder(reminder, at: "\(pointer)/reminder", problem) }
        problems += found
        warnings += incomplete
    }

    private func checkReminder(_ reminder: ActivityReminder, at pointer: String, _ problem: (String, String) -> Void) {
        let ranges: [(String, Int?, ClosedRange<Int>)] = [
            ("afterMinutes", reminder.afterMinutes, ActivityReminder.afterMinutesRange),
            ("randomMinutes", reminder.randomMinutes, ActivityReminder.randomMinutesRange),
            ("maxPerDay", reminder.maxPerDay, ActivityReminder.maxPerDayRange),
        ]
        for (name, value, range) in ranges {
            if let value, !range.contains(value) { problem("\(pointer)/\(name)", "must be \(range.lowerBound) to \(range.upperBound)") }
        }
        for (name, value) in [("quietFrom", reminder.quietFrom), ("quietUntil", reminder.quietUntil)] {
            if let value, LocalTimes.time(value) == nil { problem("\(pointer)/\(name)", TimeWords.mustBeATime) }
        }
        if (reminder.quietFrom == nil) != (reminder.quietUntil == nil) {
            problem("\(pointer)/\(reminder.quietFrom == nil ? "quietFrom" : "quietUntil")", "quiet hours need both a start and an end")
        } else if let from = reminder.quietFrom, from == reminder.quietUntil {
            problem("\(pointer)/quietUntil", "quiet hours must end at another time than they start")
        }
        if let message = reminder.message {
            for (language, text) in message.translations where text.unicodeScalars.count > 200 {
                problem("\(pointer)/message/\(language)", "is at most 200 characters")
            }
        }
    }

    private func duplicates(_ keys: [String], at pointer: String, _ problem: (String, String) -> Void) {
        var seen: Set<String> = []
        for (index, key) in keys.enumerated() {
            if key.isEmpty {
                problem("\(pointer)/\(index)/key", "a step needs a key")
            } else if !seen.insert(key.uppercased()).inserted {
                // Keys name columns and child tables, which match whatever their case.
                problem("\(pointer)/\(index)/key", "duplicate step key \"\(key)\" (keys are compared whatever their case)")
            }
        }
    }

    private func checkStep(
        _ step: ActivityStep, at pointer: String, _ problem: (String, String) -> Void, _ warning: (String, String) -> Void
    ) {
        if !step.key.isEmpty, !Identifiers.isValid(step.key) { problem("\(pointer)/key", Identifiers.rule) }
        guard let format = step.format else {
            if [.textChoice, .textScale, .valuePicker, .imageChoice].contains(step.responseType) {
                warning("\(pointer)/format", "it is \(ResponseType.words(step.resultType)) with no choices")
            }
            return
        }
        switch format {
        case .scale(let scale):
            if let min = scale.minValue, let max = scale.maxValue, min >= max {
                problem("\(pointer)/format/maxValue", "must be greater than the lowest value")
            }
            // Only once the bounds are in order: a range whose lower bound is above its upper one
            // traps, and `minValue` > `maxValue` is the problem reported just above.
            if let value = scale.default, let min = scale.minValue, let max = scale.maxValue, min <= max, !(min...max).contains(value) {
                problem("\(pointer)/format/default", "must lie between the lowest and the highest value")
            }
            if let step = scale.step, step <= 0 { problem("\(pointer)/format/step", "must be greater than 0") }
            if let digits = scale.maxFractionDigits, !DocumentBounds.fractionDigits.contains(digits) {
                problem("\(pointer)/format/maxFractionDigits", "must be 0 to \(DocumentBounds.fractionDigits.upperBound)")
            }
        case .choice(let choice):
            let choices = choice.textChoices ?? []
            if choices.isEmpty { warning("\(pointer)/format/textChoices", "the question has no choices") }
            var seen: Set<String> = []
            for (index, item) in choices.enumerated() {
                guard let value = item.value ?? item.text?.text(for: nil) else { continue }
                if !seen.insert(value).inserted {
                    problem("\(pointer)/format/textChoices/\(index)/value", "choice value \"\(value)\" is repeated")
                }
            }
        case .imageChoice(let format):
            var seen: Set<String> = []
            for (index, item) in (format.imageChoices ?? []).enumerated() {
                if let value = item.value, !seen.insert(value).inserted {
                    problem("\(pointer)/format/imageChoices/\(index)/value", "choice value \"\(value)\" is repeated")
                }
            }
        case .numeric(let numeric):
            if let min = numeric.minValue, let max = numeric.maxValue, min >= max {
                problem("\(pointer)/format/maxValue", "must be greater than the lowest value")
            }
        case .text(let text):
            if let length = text.maxLength, !DocumentBounds.maxLength.contains(length) {
                problem("\(pointer)/format/maxLength", "must be 0 (no limit) to \(DocumentBounds.maxLength.upperBound)")
            }
            if let regex = text.validationRegex, (try? NSRegularExpression(pattern: regex)) == nil {
                problem("\(pointer)/format/validationRegex", "is not a valid regular expression")
            }
        case .timeInterval(let interval):
            if let step = interval.step, step <= 0 { problem("\(pointer)/format/step", "must be greater than 0") }
        case .fetalKickCounter(let task):
            checkCount(task.kickCount, at: "\(pointer)/format/kickCount", problem)
        case .towerOfHanoi(let task):
            checkCount(task.numberOfDisks, at: "\(pointer)/format/numberOfDisks", problem)
        case .spatialSpanMemory(let task):
            checkCount(task.initialSpan, at: "\(pointer)/format/initialSpan", problem)
            checkCount(task.minimumSpan, at: "\(pointer)/format/minimumSpan", problem)
            checkCount(task.maximumSpan, at: "\(pointer)/format/maximumSpan", problem)
            checkCount(task.maximumTests, at: "\(pointer)/format/maximumTests", problem)
            checkCount(task.maximumConsecutiveFailures, at: "\(pointer)/format/maximumConsecutiveFailures", problem)
            if let low = task.minimumSpan, let high = task.maximumSpan, low > high {
                problem("\(pointer)/format/maximumSpan", "must be at least the shortest span (\(low))")
            } else if let low = task.minimumSpan, let high = task.maximumSpan, let first = task.initialSpan, !(low...high).contains(first) {
                problem("\(pointer)/format/initialSpan", "must lie between the shortest span (\(low)) and the longest (\(high))")
            }
        case .date(let date):
            checkDates(date, at: "\(pointer)/format", problem)
        case .email, .height, .location, .empty, .other:
            break
        }
    }

    /// A date question's range: the iOS app force-unwraps `DateRange(rawValue:)`, so a range it
    /// does not know ends it; a date it cannot read is silently no bound, so it is refused here.
    private func checkDates(_ date: DateFormat, at pointer: String, _ problem: (String, String) -> Void) {
        if let range = date.dateRange, !range.isEmpty,
            !DateFormat.ranges.contains(where: { $0.unicodeScalars.elementsEqual(range.unicodeScalars) }) {
            problem("\(pointer)/dateRange", "must be from the earliest to the latest (custom), up to the moment it is answered (untilCurrent) or from a day after (afterCurrent)")
        }
        func instant(_ text: String?, _ member: String) -> Date? {
            guard let text, !text.isEmpty else { return nil }
            guard text.utf8.count == 28, let (instant, _) = AppDates.instantAndOffset(text) else {
                problem("\(pointer)/\(member)", "is not a date and time as the apps read it (such as 2026-03-01T09:00:00.000+0100)")
                return nil
            }
            return instant
        }
        let earliest = instant(date.minDate, "minDate")
        let latest = instant(date.maxDate, "maxDate")
        let start = instant(date.default, "default")
        if let earliest, let latest, earliest >= latest {
            problem("\(pointer)/maxDate", "must be later than the earliest date")
        } else if let start, (earliest.map { start < $0 } ?? false) || (latest.map { start > $0 } ?? false) {
            problem("\(pointer)/default", "must lie between the earliest and the latest date")
        }
    }

    /// An active task's count or span: within `DocumentBounds.taskCount`.
    private func checkCount(_ value: Int?, at pointer: String, _ problem: (String, String) -> Void) {
        guard let value, !DocumentBounds.taskCount.contains(value) else { return }
        problem(pointer, "must be 1 to \(DocumentBounds.taskCount.upperBound)")
    }

    /// Destinations go to a step of this activity (or "" to end); conditions fit the question.
    private func checkDestinations(
        _ step: ActivityStep, at pointer: String, stepKeys: Set<ScalarKey>, _ problem: (String, String) -> Void
    ) {
        let choiceValues = Set(Self.choiceValues(of: step))
        for (index, destination) in (step.destinations ?? []).enumerated() {
            let at = "\(pointer)/destinations/\(index)"
            if !destination.destination.isEmpty, !stepKeys.contains(ScalarKey(destination.destination)) {
                problem("\(at)/destination", "\"\(destination.destination)\" is not a step of this activity")
            }
            if destination.destination == step.key {
                problem("\(at)/destination", "a step cannot branch to itself")
            }
            guard !destination.condition.isEmpty else { continue }
            if let responseType = step.responseType, responseType.isNumeric {
                if destination.numericOperator == nil {
                    problem("\(at)/operator", "a branch on a number needs a comparison: >, <, =, !=, >= or <= (gt, lt, e, ne, gte, lte)")
                }
                if Double(destination.condition) == nil {
                    problem("\(at)/condition", "\"\(destination.condition)\" is not a number")
                }
            } else if let responseType = step.responseType, responseType.isChoice {
                if !choiceValues.contains(destination.condition) {
                    problem("\(at)/condition", "\"\(destination.condition)\" is not a choice value of \(step.key)")
                }
            } else {
                problem("\(at)/condition", "only choice and numeric questions branch on their answer")
            }
        }
    }

    /// The values a choice question can answer with.
    static func choiceValues(of step: ActivityStep) -> [String] {
        switch step.format {
        case .choice(let format)?: return (format.textChoices ?? []).compactMap { $0.value ?? $0.text?.text(for: nil) }
        case .imageChoice(let format)?: return (format.imageChoices ?? []).compactMap(\.value)
        default: return step.responseType == .boolean ? ["true", "false"] : []
        }
    }
}

/// Where an anchor points must exist and hold a date.
enum AnchorCheck {
    static func run(_ anchor: Anchor, in document: StudyDocument, at pointer: String, into problems: inout [ValidationProblem]) {
        func problem(_ at: String, _ message: String) { problems.append(ValidationProblem(pointer: at, message: message)) }
        switch anchor.source {
        case .enrollmentDate:
            break
        case .activityResponse:
            guard let activityId = anchor.activityId,
                let activity = document.activities.first(where: { $0.activityId == activityId })
            else {
                problem("\(pointer)/activityId", "must name an activity of this study")
                return
            }
            guard let key = anchor.key, let question = activity.question(key: key, formKey: anchor.formKey) else {
                problem("\(pointer)/key", "must name a question of \(activityId)")
                return
            }
            if question.responseType != .date {
                problem("\(pointer)/key", "an anchor must be a date question; \"\(key)\" is \(ResponseType.words(question.resultType))")
            }
        case .participantProperty:
            guard let key = anchor.propertyKey,
                let property = document.participantProperties.first(where: { $0.key == key })
            else {
                problem("\(pointer)/propertyKey", "must name a participant property of this study")
                return
            }
            if property.dataType != .date || property.useAsAnchor != true {
                problem("\(pointer)/propertyKey", "\"\(key)\" is not a date property that schedules may count from")
            }
        }
    }
}
