import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `eligibilityConsent` and `consentDocument`: what the apps show when a participant joins.
extension WCPRoutes {
    @Sendable package func eligibilityConsent(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> EligibilityConsentReply {
        let studyId = try Self.required("studyId", client)
        guard let current = try await visible(studyId, to: client), current.status != .upcoming else { throw Self.noStudy }
        let document = current.document
        let language = client.language
        func text(_ value: LocalizedText?) -> String { value?.text(for: language) ?? "" }

        let eligibility = document.eligibility
        let test = eligibility.questions.map { question -> ActivityStep in
            var step = ActivityStep(type: .question, resultType: ResponseType.boolean.rawValue, key: question.key)
            step.title = question.text
            return step.served(language: language)
        }
        let consent = document.consent
        let comprehension = consent.comprehension.map { comprehension in
            EligibilityConsentReply.Comprehension(
                passScore: comprehension.passScore,
                questions: comprehension.questions.map { question in
                    var step = ActivityStep(type: .question, resultType: ResponseType.textChoice.rawValue, key: question.key)
                    step.title = question.text
                    step.format = .choice(ChoiceFormat(textChoices: question.choices, selectionStyle: question.selectionStyle ?? .single))
                    return step.served(language: language)
                },
                correctAnswers: comprehension.questions.map {
                    .init(key: $0.key, answer: $0.correctAnswers, evaluation: ($0.evaluation ?? .any).rawValue)
                })
        }
        return EligibilityConsentReply(
            eligibility: .init(
                type: eligibility.type.rawValue, tokenTitle: text(eligibility.tokenTitle), test: test,
                correctAnswers: eligibility.questions.map { .init(key: $0.key, answer: $0.passingAnswer) }),
            consent: .init(
                version: VersionCounters.consentLabel(of: document, version: current.consentVersion),
                visualScreens: consent.visualScreens.map { screen in
                    .init(
                        type: screen.type.rawValue, title: text(screen.title), text: text(screen.text),
                        description: text(screen.description), html: text(screen.html), url: screen.url ?? "",
                        visualStep: screen.visualStep ?? true)
                },
                comprehension: comprehension,
                sharing: consent.sharing.map { sharing in
                    .init(
                        title: text(sharing.title), text: text(sharing.text), shortDesc: text(sharing.shortDesc),
                        longDesc: text(sharing.longDesc), learnMore: text(sharing.learnMore),
                        allowWithoutSharing: sharing.allowWithoutSharing ?? true)
                },
                review: .init(
                    title: text(consent.review.title), signatureTitle: text(consent.review.signatureTitle),
                    reviewHTML: Self.consentHTML(consent, language: language),
                    reasonForConsent: text(consent.review.reasonForConsent), consentByLAR: consent.review.consentByLAR,
                    additionalSignature: consent.review.additionalSignature,
                    signatures: consent.review.signatures.map { $0.text(for: language) })))
    }

    /// The consent document of the requested consent version (the current one when the apps send
    /// the parameter empty, as they do).
    @Sendable package func consentDocument(
        _ request: Request, context: ServiceRequestContext, client: AppClient
    ) async throws -> ConsentDocumentReply {
        let studyId = try Self.required("studyId", client)
        guard let current = try await visible(studyId, to: client), current.status != .upcoming else { throw Self.noStudy }
        var consentVersion = current.consentVersion
        var document = current.document
        if let label = client.string("consentVersion"), !label.isEmpty {
            guard let requested = try await published.version(studyId: studyId, consentLabel: label) else {
                throw Self.noStudy
            }
            consentVersion = requested.consentVersion
            document = try await published.document(studyId: studyId, version: requested.version)
        }
        return ConsentDocumentReply(
            consent: .init(
                version: VersionCounters.consentLabel(of: document, version: consentVersion), type: "text/html",
                content: Self.consentHTML(document.consent, language: client.language),
                enrollAgain: try await published.reconsent(studyId: studyId, consentVersion: consentVersion)))
    }

    /// The document a participant signs (`Consent.signedDocumentHTML`).
    package static func consentHTML(_ consent: Consent, language: String?) -> String {
        consent.signedDocumentHTML(language: language)
    }
}

extension EligibilityConsentReply: ResponseEncodable {}
extension ConsentDocumentReply: ResponseEncodable {}
