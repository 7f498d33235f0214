package form

import (
	"encoding/json"
	"reflect"
	"testing"
)

// every kind of field form mode allows, each with a default except name.
const everyKind = `{
  "type": "object",
  "properties": {
    "name":    {"type": "string", "title": "Your name", "minLength": 2, "maxLength": 10},
    "email":   {"type": "string", "format": "email", "default": "a@example.com"},
    "age":     {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
    "score":   {"type": "number", "minimum": 0.5, "default": 2.5},
    "agree":   {"type": "boolean", "default": true},
    "color":   {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"], "default": "g"},
    "size":    {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
    "tags":    {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "default": ["a", "c"], "maxItems": 2}
  },
  "required": ["name"]
}`

func TestASchemaBecomesFieldsInItsOwnOrder(t *testing.T) {
	f, err := Parse(json.RawMessage(everyKind))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fd := range f.Fields {
		got = append(got, fd.Name+":"+string(fd.Kind))
	}
	want := []string{"name:text", "email:text", "age:integer", "score:number", "agree:boolean",
		"color:select", "size:select", "tags:multi_select"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	if f.Fields[0].Title != "Your name" || !f.Fields[0].Required || f.Fields[1].Required {
		t.Errorf("title/required not read: %+v %+v", f.Fields[0], f.Fields[1])
	}
	if o := f.Fields[5].Options; len(o) != 2 || o[1] != (Option{"g", "Green"}) {
		t.Errorf("enum options with enumNames: %+v", o)
	}
	if o := f.Fields[6].Options; len(o) != 2 || o[0] != (Option{"s", "Small"}) {
		t.Errorf("oneOf options with titles: %+v", o)
	}
	wantInit := map[string][]string{"email": {"a@example.com"}, "age": {"30"}, "score": {"2.5"},
		"agree": {"true"}, "color": {"g"}, "tags": {"a", "c"}}
	if got := f.Initial(); !reflect.DeepEqual(got, wantInit) {
		t.Errorf("initial values %v, want %v", got, wantInit)
	}
}

func TestOmittedFieldsGetTheirDefaultsAndValuesTheirTypes(t *testing.T) {
	f, err := Parse(json.RawMessage(everyKind))
	if err != nil {
		t.Fatal(err)
	}
	content, problems := f.Answer(map[string][]string{"name": {"Ada"}, "age": {""}, "size": {"l"}})
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	want := map[string]any{"name": "Ada", "email": "a@example.com", "age": int64(30), "score": 2.5,
		"agree": true, "color": "g", "size": "l", "tags": []any{"a", "c"}}
	if !reflect.DeepEqual(content, want) {
		t.Fatalf("content %#v\nwant %#v", content, want)
	}
}

func TestBadValuesAreRefusedFieldByFieldInWords(t *testing.T) {
	f, err := Parse(json.RawMessage(everyKind))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		in    map[string][]string
		field string
		want  string
	}{
		{"a required field left blank", map[string][]string{"name": {" "}}, "name", "This field is required."},
		{"text too short", map[string][]string{"name": {"A"}}, "name", "Enter at least 2 characters."},
		{"text too long", map[string][]string{"name": {"Abcdefghijk"}}, "name", "Enter at most 10 characters."},
		{"not an email", map[string][]string{"name": {"Ada"}, "email": {"nope"}}, "email", "Enter an email address, such as name@example.com."},
		{"an integer out of range", map[string][]string{"name": {"Ada"}, "age": {"200"}}, "age", "Enter 150 or less."},
		{"a fraction for an integer", map[string][]string{"name": {"Ada"}, "age": {"2.5"}}, "age", "Enter a whole number."},
		{"words for a number", map[string][]string{"name": {"Ada"}, "score": {"lots"}}, "score", "Enter a number."},
		{"a number under its minimum", map[string][]string{"name": {"Ada"}, "score": {"0.1"}}, "score", "Enter 0.5 or more."},
		{"neither yes nor no", map[string][]string{"name": {"Ada"}, "agree": {"maybe"}}, "agree", "Answer yes or no."},
		{"a choice not offered", map[string][]string{"name": {"Ada"}, "color": {"blue"}}, "color", "Choose one of the options."},
		{"too many choices", map[string][]string{"name": {"Ada"}, "tags": {"a", "b", "c"}}, "tags", "Choose at most 2."},
		{"a field the form does not have", map[string][]string{"name": {"Ada"}, "admin": {"true"}}, "admin", "The form has no such field."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, problems := f.Answer(tt.in)
			if content != nil {
				t.Fatalf("accepted %v", content)
			}
			if problems[tt.field] != tt.want {
				t.Fatalf("problem for %s = %q, want %q (all: %v)", tt.field, problems[tt.field], tt.want, problems)
			}
		})
	}
}

func TestTheWholeSchemaStillJudgesWhatTheFieldChecksDoNotKnow(t *testing.T) {
	f, err := Parse(json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := f.Answer(map[string][]string{"code": {"abc"}}); problems["code"] == "" {
		t.Fatalf("a value breaking the pattern passed: %v", problems)
	}
	if content, problems := f.Answer(map[string][]string{"code": {"ABC"}}); problems != nil || content["code"] != "ABC" {
		t.Fatalf("a value matching the pattern: %v %v", content, problems)
	}
}

func TestSchemasThatAreNoFormAreRefused(t *testing.T) {
	for name, schema := range map[string]string{
		"a nested object":           `{"type":"object","properties":{"a":{"type":"object"}}}`,
		"a list of objects":         `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`,
		"a default of a wrong type": `{"type":"object","properties":{"a":{"type":"integer","default":"x"}}}`,
		"not an object":             `{"type":"string"}`,
	} {
		if _, err := Parse(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
