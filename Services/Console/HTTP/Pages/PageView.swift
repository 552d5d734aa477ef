import Mustache

/// A page's own values: a struct whose stored properties are the names its template reads, so
/// a value set under a mistyped name does not compile. Its rows are structs too; a property that
/// is nil draws nothing and opens no section.
package protocol PageView {
    /// The template (`Resources/Templates/<name>.mustache`) that draws it.
    static var template: String { get }
}

/// What the layout (`head.mustache`) reads on every page.
package struct PageLayout {
    package struct SignedInUser {
        var email: String
    }

    var title: String
    /// The signed-in admin; nil on the pages before signing in.
    var user: SignedInUser?
    /// The session's form token, which every form of the page sends back.
    var csrf: String?

    package init(title: String, user: SignedInUser?, csrf: String?) {
        self.title = title
        self.user = user
        self.csrf = csrf
    }
}

/// A page as its template sees it: a name is looked up in the page's own values, then (study
/// pages only) in `study`, the study's header, and `studyNav`, its menu drawn by
/// `study-nav.mustache`, then in the layout.
package struct Page<Body: PageView> {
    var layout: PageLayout
    var menu: StudyMenu?
    var body: Body

    init(layout: PageLayout, menu: StudyMenu?, body: Body) {
        self.layout = layout
        self.menu = menu
        self.body = body
    }

    /// A page outside any study.
    package init(layout: PageLayout, body: Body) {
        self.init(layout: layout, menu: nil, body: body)
    }
}

/// A page's values as swift-mustache reads them: each struct becomes a dictionary of its stored
/// properties once, before drawing (swift-mustache would otherwise reflect a struct again for
/// every name it looks up), and a nil property becomes `TemplateValues.absent`, which draws
/// nothing and stops the lookup there instead of reading a same-named value further out.
enum TemplateValues {
    /// A nil property: empty text, a closed section, an open inverted section.
    struct Absent: MustacheCustomRenderable {
        var renderText: String { "" }
        var isNull: Bool { true }
    }

    static let absent = Absent()

    static func value(_ value: Any) -> Any {
        // The common values first, by cast (an optional holding one is unwrapped here too).
        switch value {
        case let text as String: return text
        case let flag as Bool: return flag
        case let number as Int: return number
        case let html as SafeHTML: return html
        default: break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional: return mirror.children.first.map { Self.value($0.value) } ?? absent
        case .collection: return mirror.children.map { Self.value($0.value) }
        case .struct: return properties(mirror)
        default: return value
        }
    }

    static func properties(_ mirror: Mirror) -> [String: Any] {
        var properties: [String: Any] = [:]
        for child in mirror.children {
            guard let label = child.label else { continue }
            properties[label] = value(child.value)
        }
        return properties
    }
}

/// The outermost values of a page: the body's and the layout's properties in one dictionary,
/// with the study's menu drawn and its study (or a menu's own, when the menu is drawn). A name
/// that none of them has (a template's typo, or a value a page forgot) is
/// kept in `unknownNames`: the lookup reaches here only when every inner value missed it. (One
/// is made per drawing, on the drawing's task.)
final class PageRoot: MustacheParent {
    private let values: [String: Any]
    /// The names asked for that the page does not have, each once, in the order asked.
    private(set) var unknownNames: [String] = []

    init(_ values: [String: Any]) {
        self.values = values
    }

    func child(named name: String) -> Any? {
        guard let value = values[name] else {
            if !unknownNames.contains(name) { unknownNames.append(name) }
            return nil
        }
        return value
    }
}
