import Foundation
import JSONText
import StudyModels

// An app's page: what the admin API's app definition holds (docs/admin-api.md, Apps), edited with
// the same fields and lists as a study's pages.
extension StudySection {
    /// The app definition's page; `isNew` adds the ids, which never change afterwards.
    package static func app(isNew: Bool) -> StudySection {
        var elements: [FormElement] = []
        if isNew {
            elements += [
                plain("/appId", "App id", help: "What the app sends in its applicationId header; permanent."),
                plain("/orgId", "Organization id", help: "What the app sends in its orgId header."),
            ]
        }
        elements += [
            text("/name", "Name"),
            .field(FormField("/kind", "Kind", .choice([
                .init("gateway", "Gateway (lists many studies)"), .init("standalone", "Standalone (one study)"),
            ]))),
            release("/ios", "iOS"),
            release("/android", "Android"),
            plain("/termsUrl", "Terms of use URL"), plain("/privacyUrl", "Privacy policy URL"),
            plain("/supportEmail", "Receives contact-us messages"), plain("/feedbackEmail", "Receives feedback"),
            .group(FormGroup("/gateway", "Gateway home screen", toggle: "The app shows pages and resources of its own", [
                .list(FormList("/info", "Pages", item: "Page", [
                    text("/title", "Title"), longText("/text", "Text"), plain("/image", "Image URL"), plain("/videoUrl", "Video URL"),
                ])),
                .list(FormList("/resources", "Resources", item: "Resource", newItem: .object(["type": .string("html")]), [
                    plain("/resourceId", "Id"), text("/title", "Title"),
                    .field(FormField("/type", "Kind", .choice([.init("html", "Text (HTML)"), .init("pdf", "PDF (its URL)")]))),
                    longText("/content", "Text, or the PDF's URL"),
                ])),
            ])),
            .group(FormGroup("/mail", "E-mail to participants", toggle: "Use texts of this app's own (otherwise the built-in ones)", [
                plain("/fromAddress", "From address"), plain("/fromName", "From name"),
                mailText("/verification", "Verification code", help: "<<< TOKEN HERE >>> marks where the code goes."),
                mailText("/passwordHelp", "Temporary password", help: "<<< TOKEN HERE >>> marks where the password goes."),
                mailText("/feedback", "Feedback forwarded to the team", help: nil),
                mailText("/contact", "Contact-us message forwarded to the team", help: nil),
            ])),
        ]
        return StudySection(
            slug: isNew ? "new" : "app", title: isNew ? "New app" : "App",
            intro: "An app build's identity, the versions it must have, its links and its participant e-mail.", elements: elements)
    }

    static func release(_ pointer: String, _ platform: String) -> FormElement {
        .group(FormGroup(pointer, platform, toggle: "Tell \(platform) users about new versions", [
            plain("/latestVersion", "Latest version", help: "Compared number by number: 1.10 is newer than 1.9."),
            .field(FormField("/forceUpdate", "Older versions must update", .checkbox)),
            text("/message", "Message to users of an older version"),
        ]))
    }

    static func mailText(_ pointer: String, _ label: String, help: String?) -> FormElement {
        .group(FormGroup(pointer, label, toggle: "A text of this app's own", help: help, [
            plain("/subject", "Subject"), .field(FormField("/body", "Body (HTML)", .longText)),
        ]))
    }
}
