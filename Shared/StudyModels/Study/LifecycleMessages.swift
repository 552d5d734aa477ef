/// The notifications a lifecycle action sends, as the original servers did: a new study is
/// announced to every user of a gateway app; participants hear when their study pauses, resumes
/// or closes. Texts are given in every language the platform ships (English and Spanish). The
/// console quotes them beside the actions that send them.
public struct LifecycleMessage: Sendable, Equatable {
    public var type: NotificationMessage.Kind
    public var subtype: String
    public var message: LocalizedText

    /// The message for `action` on a study named `name`, or nil when the action sends none.
    public static func message(for action: LifecycleAction, studyName name: LocalizedText, gatewayApp: Bool) -> LifecycleMessage? {
        let en = name.text(for: "en"), es = name.text(for: "es")
        switch action {
        case .publish where gatewayApp:
            return .init(type: .gateway, subtype: "Study", message: LocalizedText(translations: [
                "en": "A new study is coming soon: \(en).", "es": "Próximamente un nuevo estudio: \(es).",
            ]))
        case .launch where gatewayApp:
            return .init(type: .gateway, subtype: "Study", message: LocalizedText(translations: [
                "en": "A new study is open: \(en).", "es": "Un nuevo estudio está abierto: \(es).",
            ]))
        case .pause:
            return .init(type: .study, subtype: "studyEvent", message: LocalizedText(translations: [
                "en": "\(en) is paused. Its activities are unavailable until it resumes.",
                "es": "\(es) está en pausa. Sus actividades no están disponibles hasta que se reanude.",
            ]))
        case .resume:
            return .init(type: .study, subtype: "studyEvent", message: LocalizedText(translations: [
                "en": "\(en) has resumed.", "es": "\(es) se ha reanudado.",
            ]))
        case .deactivate:
            return .init(type: .study, subtype: "studyEvent", message: LocalizedText(translations: [
                "en": "\(en) has closed. Thank you for taking part.",
                "es": "\(es) ha finalizado. Gracias por participar.",
            ]))
        default:
            return nil
        }
    }
}
