import JSONText
import StudyModels

/// Branching as `enableWhen`. The MyStudies apps branch by jumping: after a question, an answer
/// that meets a destination's condition goes to that destination, skipping the steps between.
/// FHIR says when an item is shown instead, so each skipped step is shown while the answer does
/// not meet the condition (the negated comparison), and a step skipped by several jumps is
/// shown while none of them is taken (`enableBehavior` `all`). A jump back, or a default that
/// does not go to the next step, has no such reading and is listed as not mapped.
extension ItemBuilder {
    mutating func branchingConditions(_ steps: [ActivityStep]) -> [String: [JSONValue]] {
        var conditions: [String: [JSONValue]] = [:]
        let position = Dictionary(steps.enumerated().map { ($0.element.key, $0.offset) }, uniquingKeysWith: { first, _ in first })
        for (index, step) in steps.enumerated() {
            for destination in step.destinations ?? [] {
                let target = destination.destination.isEmpty ? steps.count : position[destination.destination]
                guard let target else {
                    noteBranch(step.key, "a branch to '\(destination.destination)', which is not a step of the activity")
                    continue
                }
                if destination.condition.isEmpty {
                    if target != index + 1 && !(target == steps.count && index == steps.count - 1) {
                        noteBranch(step.key, "the default branch to '\(destination.destination.isEmpty ? "the end" : destination.destination)'")
                    }
                    continue
                }
                guard target > index else {
                    noteBranch(step.key, "a branch back to '\(destination.destination)'")
                    continue
                }
                guard target > index + 1 else { continue }
                guard let condition = skipCondition(step, destination) else {
                    noteBranch(step.key, "the branch on '\(destination.condition)' to '\(destination.destination)'")
                    continue
                }
                for skipped in steps[(index + 1)..<target] { conditions[skipped.key, default: []].append(condition) }
            }
        }
        return conditions
    }

    private mutating func noteBranch(_ linkId: String, _ what: String) {
        appendNotMapped(NotMapped(linkId: linkId, reason: "\(what) cannot be said as enableWhen"))
    }

    /// The condition under which a step the destination skips is shown: the destination's
    /// comparison, negated.
    private func skipCondition(_ step: ActivityStep, _ destination: Destination) -> JSONValue? {
        let comparison: String
        if let numeric = destination.numericOperator {
            switch numeric {
            case .greater: comparison = "<="
            case .less: comparison = ">="
            case .equal: comparison = "!="
            case .notEqual: comparison = "="
            case .greaterOrEqual: comparison = "<"
            case .lessOrEqual: comparison = ">"
            }
        } else {
            comparison = "!="
        }
        return condition(question: step.key, linkId: step.key, comparison: comparison, value: destination.condition)
    }

    /// The schema app's rule: the step is shown while the other's answer compares as it says.
    mutating func visibilityCondition(_ rule: VisibilityRule, of linkId: String) -> JSONValue? {
        let comparison =
            switch rule.operator {
            case .equal: "="
            case .notEqual: "!="
            case .greaterOrEqual: ">="
            case .lessOrEqual: "<="
            }
        guard let source = question(rule.source), let value = rule.value.text,
            let condition = condition(question: rule.source, linkId: source.linkId, comparison: comparison, value: value)
        else {
            appendNotMapped(NotMapped(linkId: linkId, reason: "the rule showing it by '\(rule.source)' cannot be said as enableWhen"))
            return nil
        }
        return condition
    }

    /// `{question, operator, answer[x]}` for a comparison of the question's answer with `value`.
    private func condition(question key: String, linkId: String, comparison: String, value: String) -> JSONValue? {
        guard let source = question(key) else { return nil }
        let answer: (String, JSONValue)
        switch QuestionnaireMapping.itemType(source.step) {
        case "choice", "open-choice":
            guard comparison == "=" || comparison == "!=" else { return nil }
            let system = naming.choiceSystem(studyId: self.source.studyId, activityId: self.source.activityId, key: source.step.key)
            answer = ("answerCoding", FHIRJSON.object(["system": .string(system), "code": .string(value)]))
        case "boolean":
            guard comparison == "=" || comparison == "!=", value == "true" || value == "false" else { return nil }
            answer = ("answerBoolean", .bool(value == "true"))
        case "integer":
            guard let number = Double(value), number.rounded() == number, abs(number) < 1e9 else { return nil }
            answer = ("answerInteger", .number(JSONNumber(number)))
        case "decimal":
            guard let number = Double(value), number.isFinite else { return nil }
            answer = ("answerDecimal", .number(JSONNumber(number)))
        default:
            return nil
        }
        var members = JSONObject()
        members["question"] = .string(linkId)
        members["operator"] = .string(comparison)
        members[answer.0] = answer.1
        return .object(members)
    }
}
