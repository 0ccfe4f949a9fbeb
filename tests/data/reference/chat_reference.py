"""python chat_reference.py OUT_DIR LLAMA3_TOKENIZER_JSON

Writes what the ChatReference.* tests read into OUT_DIR, every expected
text and id from transformers itself (Jinja2 under apply_chat_template's
settings), so Strata's own template engine and conversation tokenizer are
held against the library that defines chat templates:

 - engine.jsonl: {"name", "template", "variables", "text"} or {..., "error"}:
   small templates over the Jinja constructs chat templates use (whitespace
   control, loops, filters, tests, methods, Python's operators and spellings)
   and two more published templates (templates/), rendered by transformers'
   compiled chat template environment, strftime_now on 26 Jul 2024.
 - FAMILY/ for llama3, mistral, qwen2.5 and smollm2: a tokenizer folder as
   transformers' save_pretrained writes it (tokenizer.json: Llama 3's
   byte-level BPE, which LLAMA3_TOKENIZER_JSON holds, with the family's
   special tokens added; its tokenizer_config.json / chat_template.jinja
   carrying the family's published chat template and special tokens),
   conversations.jsonl (one {"messages": [...]} a line, some with "tools"),
   and expected.jsonl, a line per conversation: {"text", "ids"} from
   apply_chat_template(tokenize=False) and (tokenize=True), and "turns": each
   assistant message's turn as the family's format writes it (Llama 3: the
   trimmed content and <|eot_id|>; Mistral: a space, the trimmed content and
   </s>; ChatML: the content, <|im_end|> and a newline; null for a turn that
   calls tools), which the tokens Strata marks as the assistant's must
   decode to; or {"error"} where the template refuses the conversation.

The templates are the published ones (each model's tokenizer_config.json
chat_template on the Hugging Face Hub), written here as text.
"""

import datetime
import json
import os
import sys

import jinja2
import tokenizers
import transformers
from transformers import PreTrainedTokenizerFast
from transformers.utils.chat_template_utils import _compile_jinja_template

# meta-llama/Meta-Llama-3-8B-Instruct.
LLAMA3 = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
    "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
    "{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)

# mistralai/Mistral-7B-Instruct-v0.3.
MISTRAL = """{%- if messages[0]["role"] == "system" %}
    {%- set system_message = messages[0]["content"] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}

{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}
{%- set ns = namespace() %}
{%- set ns.index = 0 %}
{%- for message in loop_messages %}
    {%- if not (message.role == "tool" or message.role == "tool_results" or (message.tool_calls is defined and message.tool_calls is not none)) %}
        {%- if (message["role"] == "user") != (ns.index % 2 == 0) %}
            {{- raise_exception("After the optional system message, conversation roles must alternate user/assistant/user/assistant/...") }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if message["role"] == "user" %}
        {%- if tools is not none and (message == user_messages[-1]) %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {%- set tool = tool.function %}
                {{- '{"type": "function", "function": {' }}
                {%- for key, val in tool.items() if key != "return" %}
                    {%- if val is string %}
                        {{- '"' + key + '": "' + val + '"' }}
                    {%- else %}
                        {{- '"' + key + '": ' + val|tojson }}
                    {%- endif %}
                    {%- if not loop.last %}
                        {{- ", " }}
                    {%- endif %}
                {%- endfor %}
                {{- "}}" }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- else %}
                    {{- "]" }}
                {%- endif %}
            {%- endfor %}
            {{- "[/AVAILABLE_TOOLS]" }}
            {%- endif %}
        {%- if loop.last and system_message is defined %}
            {{- "[INST] " + system_message + "\\n\\n" + message["content"] + "[/INST]" }}
        {%- else %}
            {{- "[INST] " + message["content"] + "[/INST]" }}
        {%- endif %}
    {%- elif message.tool_calls is defined and message.tool_calls is not none %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tool_call in message.tool_calls %}
            {%- set out = tool_call.function|tojson %}
            {{- out[:-1] }}
            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
            {%- endif %}
            {{- ', "id": "' + tool_call.id + '"}' }}
            {%- if not loop.last %}
                {{- ", " }}
            {%- else %}
                {{- "]" + eos_token }}
            {%- endif %}
        {%- endfor %}
    {%- elif message["role"] == "assistant" %}
        {{- " " + message["content"]|trim + eos_token}}
    {%- elif message["role"] == "tool_results" or message["role"] == "tool" %}
        {%- if message.content is defined and message.content.content is defined %}
            {%- set content = message.content.content %}
        {%- else %}
            {%- set content = message.content %}
        {%- endif %}
        {{- '[TOOL_RESULTS] {"content": ' + content|string + ", " }}
        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}
            {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
        {%- endif %}
        {{- '"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}
    {%- endif %}
{%- endfor %}
"""

# Qwen/Qwen2.5-7B-Instruct.
QWEN25 = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

# HuggingFaceTB/SmolLM2-135M-Instruct.
SMOLLM2 = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

TURNS = {
    "llama3": lambda m: m["content"].strip() + "<|eot_id|>",
    "mistral": lambda m: " " + m["content"].strip() + "</s>",
    "qwen2.5": lambda m: None if m.get("tool_calls") else m["content"] + "<|im_end|>\n",
    "smollm2": lambda m: m["content"] + "<|im_end|>\n",
}

FAMILIES = {
    "llama3": {
        "template": LLAMA3,
        "tokens": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
        "added": [],
    },
    "mistral": {
        "template": MISTRAL,
        "tokens": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
        "added": ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]",
                  "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]"],
    },
    "qwen2.5": {
        "template": QWEN25,
        "tokens": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
        "added": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    },
    "smollm2": {
        "template": SMOLLM2,
        "tokens": {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "pad_token": "<|im_end|>"},
        "added": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    },
}


def turns(*pairs, system=None):
    messages = [{"role": "system", "content": system}] if system is not None else []
    for user, assistant in pairs:
        messages.append({"role": "user", "content": user})
        messages.append({"role": "assistant", "content": assistant})
    return {"messages": messages}


COMMON = [
    turns(("Hello!", "Hi there. How can I help?")),
    turns(("What is 2+2?", "4"), ("And 3+3?", "6"), system="You are terse."),
    turns(("  Leading and trailing spaces  \n", "\nAn answer between newlines.\n")),
    turns(("Ünïcödé ✓ 中文 🙂 \u00a0nbsp", "Réponse : ça va — 😀\u3000")),
    turns(("Quote <|im_end|> and [INST] and <|eot_id|> as text", "Braces {{ x }} {% y %} {# z #}")),
    turns(("multi\nline\n\ncontent\t tab", "code:\n```\nfor i in range(3):\n    print(i)\n```")),
    turns(("one", "two"), ("three", "four"), ("five", "six")),
]

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city, now.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

EXTRA = {
    "qwen2.5": [
        {
            "messages": [
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": "",
                 "tool_calls": [{"type": "function",
                                 "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                {"role": "tool", "content": "{\"temperature\": 21.5, \"sky\": \"clear\"}"},
                {"role": "assistant", "content": "It is 21.5 °C and clear in Paris."},
            ],
            "tools": [WEATHER_TOOL],
        },
    ],
    "mistral": [
        {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"},
                      {"role": "assistant", "content": "c"}]},
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                      {"role": "user", "content": "weather?"}, {"role": "assistant", "content": "Sunny."}],
         "tools": [WEATHER_TOOL]},
    ],
    "llama3": [
        {"messages": [{"role": "system", "content": "  sys  "}, {"role": "user", "content": "u"},
                      {"role": "assistant", "content": "  a  "}]},
    ],
    "smollm2": [],
}

# Jinja constructs, each rendered with VARIABLES.
VARIABLES = {
    "messages": [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "  Hi  "},
        {"role": "assistant", "content": "Yo", "extra": {"k": [1, 2.5, None, True, "é\n\"q\""]}},
    ],
    "d": {"b": 1, "a": "x'y", "c": [1, {"z": None}]},
    "n": 7,
    "f": 2.5,
    "s": "Hello, World",
    "add_generation_prompt": True,
    "empty": [],
}

ENGINE = {
    "text": "plain text only",
    "lstrip_trim": "A\n  {% if true %}\n  inside\n  {% endif %}\nB\n",
    "dash_control": "A   {%- if true -%}   inside   {%- endif -%}   B",
    "plus_control": "A\n  {%+ if true +%}\nx\n  {%+ endif %}\nB",
    "output_dash": "A  {{- 'x' -}}  B\n  {{ 'y' }}\n",
    "comment": "A {# a comment #}\n  {#- another -#}  B\n{# c #}\nC",
    "loop_vars": "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}/{{ loop.first }}/{{ loop.last }}/{{ loop.length }} {% endfor %}",
    "loop_filter_else": "{% for x in range(10) if x is odd %}{{ x }}{% else %}none{% endfor %}|{% for x in empty %}{{ x }}{% else %}empty{% endfor %}",
    "loop_unpack": "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k, v in d | items %}{{ k }};{% endfor %}",
    "loop_control": "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}",
    "loop_scope": "{% set a = 1 %}{% for x in range(3) %}{% set a = a + x %}{{ a }}{% endfor %}{{ a }}",
    "namespace": "{% set ns = namespace(total=0, seen=[]) %}{% for x in range(4) %}{% set ns.total = ns.total + x %}{% endfor %}{{ ns.total }}",
    "set_block": "{% set greeting %}Hello {{ n }}!{% endset %}[{{ greeting }}]",
    "previtem": "{% for x in [1, 2, 3] %}{% if loop.previtem is defined %}{{ loop.previtem }}<{% endif %}{{ x }}{% if loop.nextitem is defined %}>{{ loop.nextitem }}{% endif %} {% endfor %}",
    "cycle": "{% for x in range(5) %}{{ loop.cycle('a', 'b') }}{% endfor %}",
    "arithmetic": "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1.5 + 1 }} {{ n * 2 - 1 }} {{ 3 * 'ab' }} {{ 2.0 ** -1 }}",
    "floats": "{{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1e15 }} {{ 1e16 }} {{ 0.0001 }} {{ 0.00001 }} {{ 100.0 }} {{ -2.5e-7 }} {{ f }} {{ 1/3 }}",
    "comparisons": "{{ 1 < 2 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ [1, 2] == [1, 2] }} {{ d == d }} {{ none == none }} {{ 2 >= 3 }} {{ 'x' != 'y' }}",
    "logic": "{{ 0 or 'fallback' }} {{ 'a' and 'b' }} {{ not empty }} {{ none or [] }} {{ 'x' if n > 3 else 'y' }} [{{ 'z' if false }}]",
    "membership": "{{ 'ell' in s }} {{ 2 in [1, 2] }} {{ 'a' in d }} {{ 'q' not in d }} {{ 'role' in messages[0] }}",
    "reprs": "{{ [1, 'a', none, true, 2.5] }} {{ d }} {{ none }} {{ true }} {{ [\"it's\"] }} {{ {'k': 'v\\n'} }} {{ (1, 2) }}",
    "concat": "{{ 'a' ~ 1 ~ none ~ [1] }} {{ 'a' + 'b' }} {{ [1] + [2, 3] }}",
    "subscripts": "{{ messages[0]['role'] }} {{ messages[-1].content }} {{ messages[1:] | length }} {{ s[1:4] }} {{ s[::-1] }} {{ s[-5:] }} {{ [1, 2, 3, 4][::2] }} {{ messages.0.role }}",
    "undefined": "[{{ missing }}] [{{ messages[0].missing }}] {{ missing is defined }} {{ messages[0].missing is undefined }} {{ missing | default('dflt') }} {{ '' | default('e', true) }} {{ messages[9] is defined }}",
    "tests": "{{ s is string }} {{ n is number }} {{ n is integer }} {{ f is float }} {{ d is mapping }} {{ empty is iterable }} {{ none is none }} {{ n is odd }} {{ 6 is even }} {{ 9 is divisibleby 3 }} {{ 'a' is in 'cat' }} {{ n is sameas 7 }} {{ true is true }} {{ 'abc' is lower }} {{ n is not none }} {{ n is eq 7 }}",
    "filters_text": "{{ '  x y \\n' | trim }}|{{ s | lower }}|{{ s | upper }}|{{ 'hello world' | title }}|{{ 'hELLO' | capitalize }}|{{ s | replace('o', '0') }}|{{ s | length }}|{{ 'é✓🙂' | length }}|{{ n | string }}|{{ '42' | int + 1 }}|{{ '2.5' | float }}|{{ -3 | abs }}",
    "filters_lists": "{{ [3, 1, 2] | length }}|{{ [3, 1, 2] | first }}|{{ [3, 1, 2] | last }}|{{ [1, 2] | reverse | list }}|{{ ['a', 'b'] | join(', ') }}|{{ 'abc' | list }}|{{ d | list }}|{{ messages | map(attribute='role') | join(',') }}|{{ messages | selectattr('role', 'equalto', 'user') | list | length }}|{{ messages | rejectattr('role', 'in', ['user', 'system']) | map(attribute='content') | first }}|{{ [0, 1, 2] | select | list }}|{{ [1, 2, 3, 4] | select('odd') | list }}|{{ [1, 2] | map('string') | join }}",
    "tojson": "{{ messages[2].extra | tojson }}|{{ d | tojson }}|{{ 'é\\u2028\\t' | tojson }}|{{ [] | tojson }}|{{ {} | tojson }}|{{ f | tojson }}|{{ none | tojson }}",
    "tojson_indent": "{{ d | tojson(indent=2) }}",
    "methods": "{{ '  x  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '  x '.lstrip() }}|{{ ' x  '.rstrip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b \\n c '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ s.startswith('Hell') }}|{{ s.endswith(('x', 'ld')) }}|{{ s.lower() }}|{{ s.upper() }}|{{ s.replace('l', 'L', 2) }}|{{ d.get('a') }}|{{ d.get('zz', 'none') }}|{{ d.get('zz') }}|{{ d.keys() | list }}|{{ d.values() | list | length }}",
    "strings": "{{ 'single \\'quote\\'' }} {{ \"double \\\"quote\\\"\" }} {{ 'tab\\tnew\\nline' }} {{ 'uni\\u00e9' }} {{ 'x' 'y' }}",
    "dict_literal": "{% set x = {'a': 1, 'b': [2, 3]} %}{{ x.a }} {{ x['b'][1] }} {{ x | length }}",
    "generation": "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}!{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}",
    "nested_loops": "{% for m in messages %}{% for c in m.content %}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}",
    "strftime_now": "{{ strftime_now('%d %b %Y') }} {{ strftime_now('%Y-%m-%d, a %A') }}",
    "raise": "{{ raise_exception('this conversation is refused') }}",
    "undefined_attribute": "{{ missing.attribute }}",
    "type_error": "{{ 'a' + 1 }}",
}


# strftime_now's date in the engine cases (Strata's render is given the same).
ENGINE_DATE = datetime.datetime(2024, 7, 26)


# Two more published templates (templates/, as the models' tokenizer_config.json
# carry them): DeepSeek-R1-Distill-Qwen's (namespace flags, str.split) and
# Mistral Small 3.1's (strftime_now in its default system message, list
# concatenation, dict.get, slices), over a conversation without a system message.
PUBLISHED = ["deepseek-r1-distill-qwen", "mistral-small-3.1"]
CONVERSATION = {
    "messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "<think>greet</think>Hello!"},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Goodbye."},
    ],
    "bos_token": "<s>",
    "eos_token": "</s>",
    "add_generation_prompt": False,
}


def engine_cases():
    here = os.path.dirname(os.path.abspath(__file__))
    published = {}
    for name in PUBLISHED:
        with open(os.path.join(here, "templates", name + ".jinja"), encoding="utf-8") as f:
            published[name] = f.read()
    cases = []
    for name, template in list(ENGINE.items()) + list(published.items()):
        variables = CONVERSATION if name in published else VARIABLES
        case = {"name": name, "template": template, "variables": variables}
        try:
            case["text"] = _compile_jinja_template(template).render(
                **variables, strftime_now=ENGINE_DATE.strftime)
        except jinja2.exceptions.TemplateError as error:
            case["error"] = f"{type(error).__name__}: {error}"
        except TypeError as error:
            case["error"] = f"TypeError: {error}"
        cases.append(case)
    return cases


def family_tokenizer(folder, base_tokenizer_json, family):
    tokenizer = tokenizers.Tokenizer.from_file(base_tokenizer_json)
    tokenizer.add_special_tokens([tokenizers.AddedToken(t, special=True, normalized=False) for t in family["added"]])
    tokenizer.post_processor = None
    path = os.path.join(folder, "source-tokenizer.json")
    tokenizer.save(path)
    fast = PreTrainedTokenizerFast(tokenizer_file=path, **family["tokens"])
    fast.chat_template = family["template"]
    fast.save_pretrained(folder)
    os.remove(path)
    return PreTrainedTokenizerFast.from_pretrained(folder)


def family_cases(folder, base_tokenizer_json, name):
    family = FAMILIES[name]
    os.makedirs(folder)
    tokenizer = family_tokenizer(folder, base_tokenizer_json, family)
    conversations = COMMON + EXTRA[name]
    with open(os.path.join(folder, "conversations.jsonl"), "w", encoding="utf-8") as out:
        for conversation in conversations:
            out.write(json.dumps(conversation, ensure_ascii=False) + "\n")
    expected = []
    for conversation in conversations:
        kwargs = {"tools": conversation["tools"]} if "tools" in conversation else {}
        try:
            text = tokenizer.apply_chat_template(conversation["messages"], tokenize=False, **kwargs)
            ids = tokenizer.apply_chat_template(conversation["messages"], tokenize=True, return_dict=False, **kwargs)
            turns = [TURNS[name](m) for m in conversation["messages"] if m["role"] == "assistant"]
            expected.append({"text": text, "ids": list(ids), "turns": turns})
        except jinja2.exceptions.TemplateError as error:
            expected.append({"error": str(error)})
    with open(os.path.join(folder, "expected.jsonl"), "w", encoding="utf-8") as out:
        for line in expected:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(expected)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, base = sys.argv[1], sys.argv[2]
    os.makedirs(out)
    with open(os.path.join(out, "engine.jsonl"), "w", encoding="utf-8") as f:
        for case in engine_cases():
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    for name in FAMILIES:
        count = family_cases(os.path.join(out, name), base, name)
        print(f"{name}: {count} conversations")
    print(f"transformers {transformers.__version__}, jinja2 {jinja2.__version__}, tokenizers {tokenizers.__version__}")


if __name__ == "__main__":
    main()
