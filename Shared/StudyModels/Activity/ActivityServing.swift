/// What the apps receive: one language, and every field the original servers always sent.
extension ActivityStep {
    /// This step as served to the apps in `language` (English when absent or not translated).
    public func served(language: String?) -> ActivityStep {
        var step = self
        step.title = (title ?? "").resolved(for: language)
        step.text = (text ?? "").resolved(for: language)
        step.skippable = skippable ?? false
        step.groupName = groupName ?? ""
        step.repeatable = repeatable ?? false
        step.repeatableText = (repeatableText ?? "").resolved(for: language)
        // Numeric branching by the names the apps compare (a document may use the symbols).
        step.destinations = (destinations ?? []).map { destination in
            var served = destination
            if let numeric = destination.numericOperator { served.operator = numeric.rawValue }
            return served
        }
        step.healthDataKey = healthDataKey ?? ""
        step.format = format.map { $0.resolved(for: language) } ?? .other(.object([:]))
        step.steps = (steps ?? []).map { $0.served(language: language) }
        // The schema app's rules, which the MyStudies apps have no field for.
        step.visibility = nil
        step.randomGroup = nil
        return step
    }
}

extension StepFormat {
    /// The format with every participant-facing text in `language`.
    func resolved(for language: String?) -> StepFormat {
        func text(_ value: LocalizedText?) -> LocalizedText? { value?.resolved(for: language) }
        switch self {
        case .scale(var format):
            format.maxDesc = text(format.maxDesc)
            format.minDesc = text(format.minDesc)
            return .scale(format)
        case .choice(var format):
            format.textChoices = format.textChoices?.map { choice in
                var choice = choice
                choice.text = text(choice.text)
                choice.detail = text(choice.detail)
                choice.description = text(choice.description)
                let placeholder = text(choice.other?.placeholder)
                choice.other?.placeholder = placeholder
                return choice
            }
            return .choice(format)
        case .imageChoice(var format):
            format.imageChoices = format.imageChoices?.map { choice in
                var choice = choice
                choice.text = text(choice.text)
                return choice
            }
            return .imageChoice(format)
        case .numeric(var format):
            format.unit = text(format.unit)
            format.placeholder = text(format.placeholder)
            return .numeric(format)
        case .text(var format):
            format.invalidMessage = text(format.invalidMessage)
            format.placeholder = text(format.placeholder)
            return .text(format)
        case .email(var format):
            format.placeholder = text(format.placeholder)
            return .email(format)
        case .height(var format):
            format.placeholder = text(format.placeholder)
            return .height(format)
        case .spatialSpanMemory(var format):
            format.customTargetPluralName = text(format.customTargetPluralName)
            return .spatialSpanMemory(format)
        case .date(var format):
            // The original servers always sent these, empty when unset, and the iOS app reads
            // each with a force unwrap (`ActivityQuestionStep`: `(formatDict?["minDate"] as?
            // String)!`): a date question without them would end the app.
            format.minDate = format.minDate ?? ""
            format.maxDate = format.maxDate ?? ""
            format.default = format.default ?? ""
            format.dateRange = format.dateRange ?? "custom"
            return .date(format)
        case .timeInterval, .location, .empty, .fetalKickCounter, .towerOfHanoi, .other:
            return self
        }
    }
}

extension ActivityDesign {
    /// The activity as served to the apps in `language`.
    public func served(language: String?) -> ActivityDesign {
        var design = self
        design.type = kind.rawValue
        design.metadata.name = metadata.name?.resolved(for: language)
        design.steps = steps.map { $0.served(language: language) }
        return design
    }
}
