import ConsoleCore
import Mustache

// The templates read the page models by name. Without these, swift-mustache finds each value by
// reflection (a Mirror of the whole model for every tag), which made an activity's page cost
// over 100 ms to draw; a switch costs next to nothing. A name a model does not have answers nil,
// and the template looks in the model around it, as with reflection.

extension FieldView: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "id": id
        case "name": self.name
        case "label": label
        case "help": help
        case "hasHelp": hasHelp
        case "isText": isText
        case "isLongText": isLongText
        case "isLocalized": isLocalized
        case "long": long
        case "isNumber": isNumber
        case "isCheckbox": isCheckbox
        case "isChoice": isChoice
        case "isChoices": isChoices
        case "isLines": isLines
        case "isFixed": isFixed
        case "value": value
        case "spanish": spanish
        case "valueEs": valueEs
        case "checked": checked
        case "options": options
        case "problems": problems
        case "invalid": invalid
        case "readOnly": readOnly
        case "shown": shown
        default: nil
        }
    }
}

extension FieldView.OptionView: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "value": value
        case "label": label
        case "selected": selected
        default: nil
        }
    }
}

extension ElementView: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "isField": isField
        case "field": field
        case "isList": isList
        case "list": list
        case "isGroup": isGroup
        case "group": group
        case "isVariant": isVariant
        case "variant": variant
        default: nil
        }
    }
}

extension ListView: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "id": id
        case "label": label
        case "help": help
        case "hasHelp": hasHelp
        case "countName": countName
        case "count": count
        case "rows": rows
        case "hasRows": hasRows
        case "addOp": addOp
        case "addLabel": addLabel
        case "readOnly": readOnly
        case "listProblems": listProblems
        case "listInvalid": listInvalid
        default: nil
        }
    }
}

extension ListView.RowView: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "id": id
        case "title": title
        case "fromName": fromName
        case "fromValue": fromValue
        case "elements": elements
        case "removeOp": removeOp
        case "upOp": upOp
        case "downOp": downOp
        case "isFirst": isFirst
        case "isLast": isLast
        case "rowProblems": rowProblems
        case "rowInvalid": rowInvalid
        case "rowPage": rowPage
        case "hasRowPage": hasRowPage
        case "rowPageLabel": rowPageLabel
        default: nil
        }
    }
}

extension GroupView: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "id": id
        case "label": label
        case "toggle": toggle
        case "help": help
        case "hasHelp": hasHelp
        case "markerName": markerName
        case "toggleName": toggleName
        case "on": on
        case "shown": shown
        case "elements": elements
        case "readOnly": readOnly
        default: nil
        }
    }
}

extension VariantView: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "id": id
        case "label": label
        case "help": help
        case "hasHelp": hasHelp
        case "name": self.name
        case "options": options
        case "markerName": markerName
        case "markerValue": markerValue
        case "showOp": showOp
        case "shown": shown
        case "elements": elements
        case "readOnly": readOnly
        case "problems": problems
        case "invalid": invalid
        default: nil
        }
    }
}

extension ActionChoice: MustacheParent {
    package func child(named name: String) -> Any? {
        switch name {
        case "action": action
        case "label": label
        case "explanation": explanation
        case "irreversible": irreversible
        default: nil
        }
    }
}
