import streamlit as st

st.title("lab")
